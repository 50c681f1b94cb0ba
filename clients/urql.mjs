// urql with Graphcache, both with their defaults: queries go as GET
// (preferGetMethod "within-url-limit"), variables in the URL — an Int!
// variable must arrive as an Int — and results are normalised.
import assert from "node:assert/strict";
import { Client, fetchExchange, gql } from "@urql/core";
import { cacheExchange } from "@urql/exchange-graphcache";
import { devLogin, run, step, url } from "./lib.mjs";

const PAGE = gql`
  query Page($n: Int!, $after: String) {
    problems(first: $n, after: $after) {
      edges { cursor node { id problemId title } }
      pageInfo { hasNextPage endCursor }
    }
  }
`;

run(async () => {
  const token = await devLogin("urql@example.com");
  const requests = [];
  const client = new Client({
    url,
    exchanges: [cacheExchange({}), fetchExchange],
    fetchOptions: () => ({ headers: { authorization: `Bearer ${token}` } }),
    fetch: (input, init) => {
      requests.push({ method: init?.method ?? "GET", url: String(input) });
      return fetch(input, init);
    },
  });

  const first = await client.query(PAGE, { n: 2 }).toPromise();
  assert.equal(first.error, undefined, String(first.error));
  assert.equal(first.data.problems.edges.length, 2);
  assert.equal(requests[0].method, "GET", "urql's default sends queries as GET");
  assert.ok(requests[0].url.includes("variables="), requests[0].url);

  const second = await client.query(PAGE, { n: 2, after: first.data.problems.pageInfo.endCursor }).toPromise();
  assert.equal(second.error, undefined, String(second.error));
  assert.ok(second.data.problems.edges.length >= 1);
  const ids = new Set([...first.data.problems.edges, ...second.data.problems.edges].map((e) => e.node.id));
  assert.equal(ids.size, first.data.problems.edges.length + second.data.problems.edges.length, "pages overlap");

  // Answered from Graphcache: no request.
  const n = requests.length;
  const again = await client.query(PAGE, { n: 2 }).toPromise();
  assert.equal(again.error, undefined);
  assert.equal(requests.length, n, "the same query again went to the network");

  // Mutations go as POST.
  const m = await client
    .mutation(gql`mutation($e: String!) { devLogin(email: $e) { token user { id } } }`, { e: "urql2@example.com" })
    .toPromise();
  assert.equal(m.error, undefined, String(m.error));
  assert.equal(requests.at(-1).method, "POST");
  step("urql", { requests: requests.map((r) => r.method) });
});
