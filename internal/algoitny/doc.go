// Package algoitny is the domain vocabulary of the AlgoItny backend: the
// entities (problems and their test cases, users' execution history, usage
// logs, async jobs, users and plans, URL checks, linked AtCoder accounts and
// their sync), the filters and updates used to query
// and change them, and the one error vocabulary (codes such as ENOTFOUND)
// every other package speaks.
//
// It imports no infrastructure: no AWS types, no GraphQL, no River. Storage
// lives in internal/dynamo, the API in graph/, async work in internal/jobs.
package algoitny
