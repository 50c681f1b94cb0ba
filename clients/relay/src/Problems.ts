// Documents a Relay front-end of AlgoItny writes: relay-compiler checks them
// against the server's schema (schema.graphqls) with no client-side schema
// extension, and its local persistence (SHA256) writes the manifest the
// server loads with ALGOITNY_TRUSTED_DOCUMENTS. cmd/algoitny's
// TestRelayCompiler compiles them and runs the persisted operations.
import { graphql } from "relay-runtime";

// The problem list, paged forward: @connection needs first/after with
// pageInfo { endCursor hasNextPage }.
export const problemList = graphql`
  fragment ProblemsList_query on Query
  @refetchable(queryName: "ProblemsListPaginationQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 2 }, cursor: { type: "String" }) {
    problems(first: $count, after: $cursor) @connection(key: "ProblemsList_problems") {
      edges {
        node {
          id
          title
          platform
        }
      }
    }
  }
`;

// A problem's test cases, paged backward from the end: @connection needs
// last/before with pageInfo { startCursor hasPreviousPage }; @refetchable
// on Problem needs Problem to be a Node reachable by node(id:).
export const problemTests = graphql`
  fragment ProblemsTests_problem on Problem
  @refetchable(queryName: "ProblemsTestsPaginationQuery")
  @argumentDefinitions(count: { type: "Int", defaultValue: 2 }, cursor: { type: "String" }) {
    testCases(last: $count, before: $cursor) @connection(key: "ProblemsTests_testCases") {
      totalCount
      edges {
        node {
          id
          input
        }
      }
    }
  }
`;

// A notification channel refetched by its id (a Node).
export const channel = graphql`
  fragment ProblemsChannel_channel on NotificationChannel
  @refetchable(queryName: "ProblemsChannelRefetchQuery") {
    id
    url
  }
`;

export const page = graphql`
  query ProblemsPageQuery {
    ...ProblemsList_query
    requestBudget {
      cost
      limit
      remaining
    }
  }
`;

export const problem = graphql`
  query ProblemsProblemQuery($platform: Platform!, $problemId: String!) {
    problem(platform: $platform, problemId: $problemId) {
      id
      title
      ...ProblemsTests_problem
    }
  }
`;

// Deletions answer the deleted id, for @deleteRecord.
export const removeCheck = graphql`
  mutation ProblemsRemoveCheckMutation($id: ID!) {
    removeCheck(id: $id) {
      deletedId @deleteRecord
    }
  }
`;

export const jobUpdated = graphql`
  subscription ProblemsJobSubscription($id: ID!) {
    jobUpdated(id: $id) {
      job {
        id
        status
      }
    }
  }
`;
