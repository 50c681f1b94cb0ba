package graph

import (
	"context"
	"errors"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/apierror"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// ErrorPresenter is the one place domain errors become GraphQL errors,
// their `extensions` written by apierror.Extensions. Internal errors are
// logged at ERROR and shown as a generic message, so nothing about the
// infrastructure leaks; every other code is the client's business
// (UNAVAILABLE is logged at INFO with its cause, the rest not at all), so
// no client can fill the error log.
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
		code := apierror.Code(appErr.Code)
		msg := appErr.Message
		switch code {
		case apierror.Internal:
			logger.ErrorContext(ctx, "internal error", "err", err, "path", gqlErr.Path.String())
			msg = "internal error"
		case apierror.Unavailable:
			// Not a bug, and a client can cause it at will: below ERROR.
			logger.InfoContext(ctx, "unavailable", "err", err, "path", gqlErr.Path.String())
		}
		gqlErr.Message, gqlErr.Extensions = msg, apierror.Extensions(code, appErr)
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
