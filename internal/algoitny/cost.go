package algoitny

// RequestCost is what an operation spends of its request's budget, as the
// transport computed it before running the operation: its complexity
// (every field 1, a connection its selection times its page size) against
// the complexity limit, and the bytes its answer may hold. The transport
// keeps it in the operation's statistics under RequestCostStat, where
// Query.requestBudget reads it, and shows Cost and Limit in every answer's
// `extensions.cost`.
type RequestCost struct {
	Cost, Limit   int
	ResponseBytes int64
}

// RequestCostStat names RequestCost among an operation's statistics
// (gqlgen's Stats extensions).
const RequestCostStat = "RequestCost"
