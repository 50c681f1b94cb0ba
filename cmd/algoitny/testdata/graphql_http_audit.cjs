// Runs graphql-http's server audits (its GraphQL-over-HTTP conformance
// suite) against the URL given as the first argument and prints every
// result as JSON: [{id, name, status, reason}]. TestGraphQLOverHTTPAudit
// runs it with NODE_PATH pointing at the .tools-node install.
'use strict';
const { auditServer } = require('graphql-http');

auditServer({ url: process.argv[2] })
  .then((results) => {
    process.stdout.write(JSON.stringify(results.map((r) => ({
      id: r.id, name: r.name, status: r.status, reason: r.reason || '',
    }))));
  })
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
