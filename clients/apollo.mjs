// Apollo Client 4 with graphql-ws, as a front-end would set them up: the
// main flow (sign in → problem → executeCode → live progress → hints →
// myUsage), across a server restart while the job runs ("restart": the
// test restarts the server; graphql-ws reconnects and subscribes again).
import assert from "node:assert/strict";
import { ApolloClient, ApolloLink, CombinedGraphQLErrors, HttpLink, InMemoryCache, gql } from "@apollo/client";
import { GraphQLWsLink } from "@apollo/client/link/subscriptions";
import { getMainDefinition } from "@apollo/client/utilities";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import { run, step, url, wsURL } from "./lib.mjs";

// Apollo's websocket link refers to the browser's WebSocket (Node 22 has
// one; Node 20 has not).
globalThis.WebSocket ??= WebSocket;

const PROBLEM = gql`
  query Problem($platform: Platform!, $problemId: String!) {
    problem(platform: $platform, problemId: $problemId) {
      id title testCaseCount
      testCases(first: 2) { totalCount edges { node { id input output } } }
    }
  }
`;
const EXECUTE = gql`
  mutation Execute($input: ExecuteCodeInput!) { executeCode(input: $input) { id type status } }
`;
const JOB_UPDATED = gql`
  subscription JobUpdated($id: ID!) {
    jobUpdated(id: $id) {
      job { id status errorMessage history { id verdict passedCount totalCount } }
      progress { id step }
    }
  }
`;
const EXECUTION_PROGRESS = gql`
  subscription ExecutionProgress($id: ID!) { executionProgress(jobId: $id) { jobId index total result { verdict } } }
`;
const HINTS = gql`mutation Hints($id: ID!) { generateHints(historyId: $id) { id type status } }`;
const HINT_PROGRESS = gql`subscription HintProgress($id: ID!) { hintProgress(historyId: $id) { historyId delta done hints } }`;
const USAGE = gql`query Usage { myUsage { action used limit remaining } }`;

function client(getToken, closes) {
  const http = new HttpLink({ uri: url });
  const auth = new ApolloLink((operation, forward) => {
    const token = getToken();
    if (token) operation.setContext(({ headers = {} }) => ({ headers: { ...headers, authorization: `Bearer ${token}` } }));
    return forward(operation);
  });
  const ws = createClient({
    url: wsURL,
    webSocketImpl: WebSocket,
    connectionParams: () => ({ Authorization: `Bearer ${getToken()}` }),
    on: {
      closed: (e) => {
        closes.push(e.code);
        step("ws-closed", { code: e.code, reason: e.reason });
      },
      connected: () => step("ws-connected"),
    },
  });
  const link = ApolloLink.split(
    ({ query }) => {
      const def = getMainDefinition(query);
      return def.kind === "OperationDefinition" && def.operation === "subscription";
    },
    new GraphQLWsLink(ws),
    auth.concat(http),
  );
  return { apollo: new ApolloClient({ link, cache: new InMemoryCache() }), ws };
}

// follow subscribes and resolves with every event once the subscription
// completes; onEvent sees each as it comes.
function follow(apollo, query, variables, onEvent = () => {}) {
  return new Promise((resolve, reject) => {
    const events = [];
    apollo.subscribe({ query, variables }).subscribe({
      next: (r) => {
        if (r.error) return reject(r.error);
        events.push(r.data);
        onEvent(r.data);
      },
      error: reject,
      complete: () => resolve(events),
    });
  });
}

run(async () => {
  let token = "";
  const closes = [];
  const { apollo, ws } = client(() => token, closes);

  const signIn = await apollo.mutate({
    mutation: gql`mutation SignIn($e: String!) { devLogin(email: $e) { token user { id email } } }`,
    variables: { e: "apollo@example.com" },
  });
  token = signIn.data.devLogin.token;
  step("signed-in");

  // A bad token: the 401 comes as application/graphql-response+json (the
  // media type Apollo asks for), so Apollo reads its GraphQL error.
  const bad = client(() => "forged", []);
  await assert.rejects(bad.apollo.query({ query: USAGE }), (err) => {
    assert.ok(CombinedGraphQLErrors.is(err), `a 401 is not read as GraphQL errors: ${err}`);
    assert.equal(err.errors[0].extensions.code, "UNAUTHENTICATED");
    return true;
  });
  bad.ws.dispose();
  step("unauthenticated");

  const { data: p } = await apollo.query({ query: PROBLEM, variables: { platform: "BAEKJOON", problemId: "1000" } });
  assert.ok(p.problem, "problem BAEKJOON/1000");
  assert.equal(p.problem.testCases.edges.length, 2);
  const tests = p.problem.testCaseCount;
  step("problem", { tests });

  const slow = "import time\na, b = map(int, input().split())\ntime.sleep(1.5)\nprint(a + b)\n";
  const { data: ex } = await apollo.mutate({
    mutation: EXECUTE,
    variables: { input: { platform: "BAEKJOON", problemId: "1000", language: "PYTHON", code: slow } },
  });
  const jobId = ex.executeCode.id;
  step("submitted", { jobId });

  let restartAsked = false;
  const askRestart = () => {
    if (!restartAsked) {
      restartAsked = true;
      step("restart", { jobId });
    }
  };
  const statuses = [];
  const [jobEvents, execEvents] = await Promise.all([
    follow(apollo, JOB_UPDATED, { id: jobId }, (d) => {
      const s = d.jobUpdated.job.status;
      if (statuses.at(-1) !== s) statuses.push(s);
    }),
    follow(apollo, EXECUTION_PROGRESS, { id: jobId }, askRestart),
  ]);
  const last = jobEvents.at(-1).jobUpdated.job;
  // Completed only after the final status, across the restart.
  assert.equal(last.status, "COMPLETED", `statuses ${statuses}`);
  assert.equal(last.history.verdict, "ACCEPTED");
  assert.equal(last.errorMessage, "", "the finished job keeps an error message");
  const indexes = [...new Set(execEvents.map((e) => e.executionProgress.index))].sort((a, b) => a - b);
  assert.deepEqual(indexes, [...Array(tests).keys()], "every test's progress, each once");
  assert.ok(restartAsked, "no progress before the end");
  assert.ok(closes.some((c) => c === 1012 || c === 1001), `close codes ${closes}`);
  // The subscription's events were normalised into the cached job.
  const cached = apollo.cache.readFragment({
    id: apollo.cache.identify({ __typename: "Job", id: jobId }),
    fragment: gql`fragment Cached on Job { status }`,
  });
  assert.equal(cached?.status, "COMPLETED");
  step("completed", { statuses, closes, events: execEvents.length });

  // A wrong answer, then hints for it.
  const wrong = "a, b = map(int, input().split())\nprint(a - b)\n";
  const { data: ex2 } = await apollo.mutate({
    mutation: EXECUTE,
    variables: { input: { platform: "BAEKJOON", problemId: "1000", language: "PYTHON", code: wrong } },
  });
  const done2 = (await follow(apollo, JOB_UPDATED, { id: ex2.executeCode.id })).at(-1).jobUpdated.job;
  assert.equal(done2.status, "COMPLETED");
  assert.equal(done2.history.verdict, "WRONG_ANSWER");
  const historyId = done2.history.id;
  const hintEvents = follow(apollo, HINT_PROGRESS, { id: historyId });
  const { data: h } = await apollo.mutate({ mutation: HINTS, variables: { id: historyId } });
  assert.equal(h.generateHints.type, "HINT_GENERATION");
  const final = (await hintEvents).at(-1).hintProgress;
  assert.ok(final.done && final.hints.length > 0, JSON.stringify(final));
  step("hints", { hints: final.hints.length });

  const { data: u } = await apollo.query({ query: USAGE, fetchPolicy: "network-only" });
  const used = Object.fromEntries(u.myUsage.map((x) => [x.action, x.used]));
  assert.deepEqual(used, { EXECUTION: 2, HINT: 1, CODE_RUN: 0, COUNTEREXAMPLE: 0 });
  step("usage", { used });
  ws.dispose();
});
