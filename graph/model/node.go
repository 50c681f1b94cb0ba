// Package model holds the GraphQL-only types gqlgen generates (connections,
// inputs, payloads). Entities are the domain types of internal/algoitny,
// bound in gqlgen.yml.
package model

// Node is any object with a global id. Domain types are bound to GraphQL
// types directly, so the interface has no methods: the generated code
// resolves the concrete type with a type switch.
type Node any
