// Shared by the client scripts that cmd/algoitny's TestClients runs: the
// server's address from the environment, and a line of JSON on stdout per
// step, which the test reads (and acts on: "restart" restarts the server).
import assert from "node:assert/strict";

export const url = process.env.ALGOITNY_URL;
if (!url) {
  console.error("ALGOITNY_URL (the server's /query URL) is not set");
  process.exit(2);
}
export const wsURL = url.replace(/^http/, "ws");

export function step(event, fields = {}) {
  process.stdout.write(JSON.stringify({ event, ...fields }) + "\n");
}

// run runs main, reporting an uncaught failure on stderr with exit code 1.
export function run(main) {
  const timer = setTimeout(() => {
    console.error("the script did not finish within 240 s");
    process.exit(1);
  }, 240_000);
  main().then(
    () => {
      clearTimeout(timer);
      step("done");
      process.exit(0);
    },
    (err) => {
      console.error(err?.stack ?? err);
      if (err?.errors) console.error(JSON.stringify(err.errors));
      process.exit(1);
    },
  );
}

// post sends one GraphQL request with fetch (for setup steps).
export async function post(query, variables, token) {
  const headers = { "content-type": "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, { method: "POST", headers, body: JSON.stringify({ query, variables }) });
  const body = await res.json();
  assert.equal(body.errors, undefined, JSON.stringify(body.errors));
  return body.data;
}

export async function devLogin(email) {
  const data = await post(`mutation($e: String!) { devLogin(email: $e) { token } }`, { e: email });
  return data.devLogin.token;
}
