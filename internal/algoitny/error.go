package algoitny

import (
	"errors"
	"fmt"
	"time"
)

// Error codes are the one error vocabulary of the application. Infrastructure
// packages translate their failures into these codes once (internal/dynamo maps
// DynamoDB's ConditionalCheckFailed to ECONFLICT, for example) and the GraphQL
// layer translates them once more into `extensions.code`.
const (
	ECONFLICT        = "conflict"        // the item exists already or changed under us
	EINTERNAL        = "internal"        // a bug or an unavailable dependency; details are logged, not shown
	EINVALID         = "invalid"         // bad input from the caller (GraphQL BAD_USER_INPUT)
	ENOTFOUND        = "not_found"       // no such item, or the caller may not know it exists
	EUNAUTHENTICATED = "unauthenticated" // no or bad credentials
	EFORBIDDEN       = "forbidden"       // authenticated but not allowed
	ERATELIMITED     = "rate_limited"    // a plan quota is used up; see RateLimit
	// EUNAVAILABLE: what was asked for cannot be done now, through no
	// fault of the caller's request, and nothing was done: a feature this
	// server is not configured for (Google sign-in without
	// GOOGLE_CLIENT_ID) or an outside service that cannot be reached
	// (AtCoder Problems). Retry later. Not a bug: logged below ERROR.
	EUNAVAILABLE = "unavailable"
	// EINTROSPECTIONDISABLED: the schema may not be introspected on this
	// server (ALGOITNY_INTROSPECTION off, the default outside dev mode).
	EINTROSPECTIONDISABLED = "introspection_disabled"
)

// Error is an application error with a machine-readable code and a message
// that is safe to show to the caller. Wrap infrastructure errors in an Error
// with code EINTERNAL; their text is never shown to users.
type Error struct {
	Code    string
	Message string
	// Field names the offending input field for EINVALID errors, if any.
	Field string
	// Fields lists every invalid field of an EINVALID error that checked
	// several (Invalids); Field and Message are the first's.
	Fields []FieldError
	// RateLimit is set for ERATELIMITED errors.
	RateLimit *RateLimit
	// Err is the underlying cause, kept for logs and errors.Is.
	Err error
}

// RateLimit describes the quota that refused a request.
type RateLimit struct {
	Action  UsageAction
	Limit   int
	Used    int
	ResetAt time.Time
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Err != nil && e.Code == EINTERNAL {
		return fmt.Sprintf("algoitny %s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("algoitny %s: %s", e.Code, e.Message)
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EINVALID error that names the offending field.
func Invalid(field, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Internal wraps an unexpected error. The message is generic; err is kept for logs.
func Internal(err error, format string, args ...any) *Error {
	return &Error{Code: EINTERNAL, Message: fmt.Sprintf(format, args...), Err: err}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL for
// any other non-nil error and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the user-facing message of err: the message of an
// *Error, or a generic text for anything else so that internals never leak.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// IsCode reports whether err carries the given code.
func IsCode(err error, code string) bool { return ErrorCode(err) == code }

// FieldError is one invalid input field: its name and what is wrong with it.
type FieldError struct{ Field, Message string }

// Invalids joins the results of several independent checks of one input,
// so that the caller learns every invalid field at once: nil when all are
// nil; the first error that is not EINVALID, as it is; otherwise one
// EINVALID error with the first's field and message and, in Fields, each
// invalid field once (its first message).
func Invalids(errs ...error) error {
	var first *Error
	var fields []FieldError
	seen := map[string]bool{}
	for _, err := range errs {
		if err == nil {
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Code != EINVALID {
			return err
		}
		if first == nil {
			first = e
		}
		for _, f := range e.fieldErrors() {
			if !seen[f.Field] {
				seen[f.Field] = true
				fields = append(fields, f)
			}
		}
	}
	if first == nil {
		return nil
	}
	out := *first
	out.Fields = fields
	return &out
}

// fieldErrors are e's invalid fields: Fields, or Field alone.
func (e *Error) fieldErrors() []FieldError {
	if len(e.Fields) > 0 {
		return e.Fields
	}
	if e.Field == "" {
		return nil
	}
	return []FieldError{{Field: e.Field, Message: e.Message}}
}

// InvalidFields are the invalid fields of an EINVALID error (every one
// Invalids gathered, or its one Field); nil for other errors.
func (e *Error) InvalidFields() []FieldError {
	if e.Code != EINVALID {
		return nil
	}
	return e.fieldErrors()
}
