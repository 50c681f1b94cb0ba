// The documents of the client flows, typed by graphql-codegen's client
// preset: `tsc --strict` must accept the generated types as a front-end's
// code uses them (non-null list items, ids as strings, enums as unions).
import { ApolloClient, HttpLink, InMemoryCache } from "@apollo/client";
import { Client, fetchExchange } from "@urql/core";
import { cacheExchange } from "@urql/exchange-graphcache";
import { graphql } from "./gql";

export const ProblemsPage = graphql(`
  query ProblemsPage($n: Int!, $after: String) {
    problems(first: $n, after: $after) {
      edges { cursor node { id platform problemId title tags } }
      pageInfo { hasNextPage endCursor }
    }
  }
`);

export const ProblemWithTests = graphql(`
  query ProblemWithTests($platform: Platform!, $problemId: String!) {
    problem(platform: $platform, problemId: $problemId) {
      id title testCaseCount
      testCases(first: 2) { totalCount edges { node { id input output } } }
    }
  }
`);

export const ExecuteCode = graphql(`
  mutation ExecuteCode($input: ExecuteCodeInput!) {
    executeCode(input: $input) { id type status }
  }
`);

export const JobUpdated = graphql(`
  subscription JobUpdated($id: ID!) {
    jobUpdated(id: $id) {
      job { id status errorMessage history { id verdict passedCount totalCount } }
      progress { step message }
    }
  }
`);

export const ExecutionProgress = graphql(`
  subscription ExecutionProgress($id: ID!) {
    executionProgress(jobId: $id) { jobId index total result { verdict } }
  }
`);

export const MyUsage = graphql(`
  query MyUsage { myUsage { action used limit remaining } }
`);

// titles reads a page as a component would: every edge and node non-null.
export async function titles(client: ApolloClient, n: number): Promise<string[]> {
  const { data } = await client.query({ query: ProblemsPage, variables: { n } });
  return data?.problems.edges.map((e) => `${e.node.platform}/${e.node.problemId}: ${e.node.title}`) ?? [];
}

// usageLeft reads myUsage through urql with Graphcache.
export async function usageLeft(url: string): Promise<Record<string, number>> {
  const client = new Client({ url, exchanges: [cacheExchange({}), fetchExchange] });
  const { data } = await client.query(MyUsage, {}).toPromise();
  const out: Record<string, number> = {};
  for (const u of data?.myUsage ?? []) {
    out[u.action] = u.remaining;
  }
  return out;
}

export function apollo(url: string): ApolloClient {
  return new ApolloClient({ link: new HttpLink({ uri: url }), cache: new InMemoryCache() });
}

// jobLine reads a jobUpdated event as a component would.
export function jobLine(client: ApolloClient, id: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sub = client.subscribe({ query: JobUpdated, variables: { id } }).subscribe({
      next: ({ data }) => {
        const job = data?.jobUpdated.job;
        if (job) {
          sub.unsubscribe();
          resolve(`${job.id} ${job.status} ${job.history?.verdict ?? "-"} ${job.history?.passedCount ?? 0}/${job.history?.totalCount ?? 0}`);
        }
      },
      error: reject,
    });
  });
}

// testIndexes reads executionProgress events: numbers are numbers.
export function testIndexes(events: { executionProgress: { index: number; total: number } }[]): number[] {
  return events.map((e) => e.executionProgress.index).sort((a, b) => a - b);
}
