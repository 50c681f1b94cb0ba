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
}

// ErrorPresenter is the one place domain errors become GraphQL errors with
// `extensions.code`. Internal errors are logged and shown as a generic
// message, so nothing about the infrastructure leaks.
func ErrorPresenter(logger *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		gqlErr := graphql.DefaultErrorPresenter(ctx, err)
		var appErr *algoitny.Error
		if !errors.As(err, &appErr) {
			if gqlErr.Extensions != nil && gqlErr.Extensions["code"] != nil {
				return gqlErr // a validation or parse error gqlgen already classified
			}
			appErr = algoitny.Internal(err, "internal error")
		}
		code := extensionCodes[appErr.Code]
		if code == "" {
			code = "INTERNAL"
		}
		ext := map[string]any{"code": code}
		msg := appErr.Message
		if code == "INTERNAL" {
			logger.ErrorContext(ctx, "internal error", "err", err, "path", gqlErr.Path.String())
			msg = "internal error"
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
