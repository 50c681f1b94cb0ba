package graph

import (
	"context"
	"errors"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Codes of `extensions.code`, one per domain error code.
var extensionCodes = map[string]string{
	algoitny.EUNAUTHENTICATED: "UNAUTHENTICATED",
	algoitny.EFORBIDDEN:       "FORBIDDEN",
	algoitny.ENOTFOUND:        "NOT_FOUND",
	algoitny.EINVALID:         "BAD_USER_INPUT",
	algoitny.ERATELIMITED:     "RATE_LIMITED",
	algoitny.ECONFLICT:        "CONFLICT",
	algoitny.EINTERNAL:        "INTERNAL",
	algoitny.EUNAVAILABLE:     "UNAVAILABLE",
	// ALGOITNY_INTROSPECTION is off: the client's mistake, not ours.
	algoitny.EINTROSPECTIONDISABLED: "INTROSPECTION_DISABLED",
}

// ErrorPresenter is the one place domain errors become GraphQL errors with
// `extensions.code`. Internal errors are logged at ERROR and shown as a
// generic message, so nothing about the infrastructure leaks; every other
// code is the client's business (UNAVAILABLE is logged at INFO with its
// cause, the rest not at all), so no client can fill the error log.
func ErrorPresenter(logger *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var appErr *algoitny.Error
		if !errors.As(err, &appErr) {
			if gqlErr.Extensions != nil && gqlErr.Extensions["code"] != nil {
				return gqlErr // a validation or parse error gqlgen already classified
			}
			if introspectionRefused(ctx) {
				appErr = &algoitny.Error{Code: algoitny.EINTROSPECTIONDISABLED, Err: err,
					Message: "introspection is disabled on this server"}
			} else {
				appErr = algoitny.Internal(err, "internal error")
			}
		}
		code := extensionCodes[appErr.Code]
		if code == "" {
			code = "INTERNAL"
		}
		ext := map[string]any{"code": code}
		msg := appErr.Message
		switch code {
		case "INTERNAL":
			logger.ErrorContext(ctx, "internal error", "err", err, "path", gqlErr.Path.String())
			msg = "internal error"
		case "UNAVAILABLE":
			// Not a bug, and a client can cause it at will: below ERROR.
			logger.InfoContext(ctx, "unavailable", "err", err, "path", gqlErr.Path.String())
		}
		if appErr.Field != "" {
			ext["field"] = appErr.Field
		}
		if rl := appErr.RateLimit; rl != nil {
			ext["limit"], ext["used"] = rl.Limit, rl.Used
			ext["remaining"] = max(0, rl.Limit-rl.Used)
			if !rl.ResetAt.IsZero() { // limits that are not daily (checks, problems) never reset
				ext["resetAt"] = rl.ResetAt
			}
		}
		gqlErr.Message, gqlErr.Extensions = msg, ext
		return gqlErr
	}
}

// introspectionRefused says whether the error being presented is gqlgen's
// refusal of __schema or __type while introspection is off (a plain
// "introspection disabled" error, which is the client's doing, not a bug).
func introspectionRefused(ctx context.Context) bool {
	if !graphql.HasOperationContext(ctx) || !graphql.GetOperationContext(ctx).DisableIntrospection {
		return false
	}
	fc := graphql.GetFieldContext(ctx)
	return fc != nil && fc.Object == "Query" && (fc.Field.Name == "__schema" || fc.Field.Name == "__type")
}
