package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/algoitny/api/internal/accounts"
	"github.com/algoitny/api/internal/algoitny"
)

// runAdmin is `algoitny admin grant|revoke EMAIL`: the way to make the first
// staff user, since no one can grant staff rights through the API at first.
// The user must have signed in once (or been created with devLogin).
func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprintln(stderr, "Usage: algoitny admin grant EMAIL    make a user staff")
		fmt.Fprintln(stderr, "       algoitny admin revoke EMAIL   take staff rights away")
		return 2
	}
	if len(args) != 2 || (args[0] != "grant" && args[0] != "revoke") || !strings.Contains(args[1], "@") {
		return usage()
	}
	cfg, ok := loadConfig(stderr, "admin")
	if !ok {
		return 1
	}
	w, err := openWriter(ctx, cfg, slog.New(slog.NewTextHandler(stderr, nil)))
	if err != nil {
		return fail(stderr, "admin", err)
	}
	defer w.Close()
	// Sockets of the user are closed at once by running servers, as when
	// the API makes the change.
	svc := &accounts.Service{Store: w.DB, Changes: w.Broker}
	u, err := svc.GrantStaff(ctx, args[1], args[0] == "grant")
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		fmt.Fprintf(stderr, "algoitny admin: no user %s; they must sign in once first\n", args[1])
		return 1
	}
	if err != nil {
		return fail(stderr, "admin", err)
	}
	fmt.Fprintf(stdout, "%s is %s\n", u.Email, map[bool]string{true: "staff now", false: "no longer staff"}[u.IsStaff])
	return 0
}
