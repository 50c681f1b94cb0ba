package algoitny

import "strings"

// CheckText refuses text that holds a NUL byte: EINVALID naming field.
// Users' text ends up in C strings (the judge's supervisor and checkers,
// compilers, terminals reading logs) where a NUL silently cuts it, and in
// keys and ids where it makes two different values look alike; no title,
// id, URL, tag or test of a problem needs one. Every place user text
// enters checks it: the GraphQL layer for every argument, the services
// again for what they store.
func CheckText(field, s string) error {
	if HasNUL(s) {
		return NULError(field)
	}
	return nil
}

// NULError is CheckText's error for field.
func NULError(field string) *Error {
	return Invalid(field, "%s must not contain NUL bytes", field)
}

// CheckTexts is CheckText over several values of one field (tags).
func CheckTexts(field string, values []string) error {
	for _, s := range values {
		if err := CheckText(field, s); err != nil {
			return err
		}
	}
	return nil
}

// HasNUL reports whether s holds a NUL byte.
func HasNUL(s string) bool { return strings.IndexByte(s, 0) >= 0 }
