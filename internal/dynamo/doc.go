// Package dynamo stores the AlgoItny domain in DynamoDB: three tables (Main,
// Users, Plans) with the key schema of design.md §4, their migration, and one
// repository per entity.
//
// Conventions:
//   - Every key string is built in keys.go, nowhere else.
//   - Item structs carry `dynamodbav` tags and are private; exported methods
//     take and return internal/algoitny types, never AWS types.
//   - DynamoDB errors are translated into algoitny error codes once, in
//     errors.go (ConditionalCheckFailed → ECONFLICT, and so on).
//   - Lists page with opaque cursors (cursor.go) built from the key of the last
//     item returned; a forged or foreign cursor is EINVALID, never a panic.
//   - BatchGetItem and BatchWriteItem retry unprocessed keys/items with
//     backoff (batch.go).
//
// No Scan is issued except where seed 001 allows an admin scan (listing all
// users).
package dynamo
