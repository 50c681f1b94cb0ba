package graph

import (
	"encoding/base64"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
)

// Global ids are opaque to clients: base64url of "Type:part1:part2…". The
// parts are the keys each entity is read by, so node(id) is one GetItem.
func globalID(typ string, parts ...string) string { return algoitny.GlobalID(typ, parts...) }

// parseID decodes a global id; with want set it must be of that type.
// Returns EINVALID naming field for anything malformed.
func parseID(field, id, want string, nparts int) (typ string, parts []string, err error) {
	bad := algoitny.Invalid(field, "invalid id")
	raw, derr := base64.RawURLEncoding.DecodeString(id)
	if derr != nil {
		return "", nil, bad
	}
	typ, rest, ok := strings.Cut(string(raw), ":")
	if !ok || (want != "" && typ != want) {
		return "", nil, bad
	}
	parts = strings.Split(rest, ":")
	if nparts > 0 && len(parts) != nparts {
		return "", nil, bad
	}
	for _, p := range parts {
		if p == "" || algoitny.HasNUL(p) {
			return "", nil, bad
		}
	}
	return typ, parts, nil
}

func problemGID(p *algoitny.Problem) string {
	return globalID("Problem", string(p.Platform), p.ProblemID)
}

func historyGID(h *algoitny.SearchHistory) string { return globalID("SearchHistory", h.UserID, h.ID) }

// parseHistoryID decodes a SearchHistory id into its reference.
func parseHistoryID(field, id string) (algoitny.HistoryRef, error) {
	_, parts, err := parseID(field, id, "SearchHistory", 2)
	if err != nil {
		return algoitny.HistoryRef{}, err
	}
	return algoitny.HistoryRef{UserID: parts[0], ID: parts[1]}, nil
}

// parseJobID decodes a Job id into the job's id.
func parseJobID(field, id string) (string, error) {
	_, parts, err := parseID(field, id, "Job", 1)
	if err != nil {
		return "", err
	}
	return parts[0], nil
}

// parseUserID decodes a User id into the user's id.
func parseUserID(field, id string) (string, error) {
	_, parts, err := parseID(field, id, "User", 1)
	if err != nil {
		return "", err
	}
	return parts[0], nil
}

// parseCheckID decodes a Check id into the check's id.
func parseCheckID(field, id string) (string, error) {
	_, parts, err := parseID(field, id, "Check", 1)
	if err != nil {
		return "", err
	}
	return parts[0], nil
}

// parseChannelID decodes a NotificationChannel id into the channel's id.
func parseChannelID(field, id string) (string, error) {
	_, parts, err := parseID(field, id, "NotificationChannel", 1)
	if err != nil {
		return "", err
	}
	return parts[0], nil
}
