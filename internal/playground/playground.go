// Package playground serves GraphiQL, the in-browser IDE developers use to
// try the API, with everything it needs inside the binary: GraphiQL's and
// React's builds (vendored from npm at pinned versions by
// scripts/vendor-playground.sh, `make playground-assets`), the page, its boot
// script and example operations of the main flow. The page loads nothing from
// anywhere but the server that serves it, so it works without internet, and
// its Content-Security-Policy says so to the browser.
//
// The boot script keeps the token of the last devLogin (or loginWithGoogle)
// run from the page and sends it as `Authorization: Bearer …` from every tab,
// over HTTP and in the websocket's connection_init, unless a tab's Headers
// set their own Authorization.
package playground

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sort"
	"strings"
)

//go:embed assets examples page.html app.js
var files embed.FS

// Example is one example operation: a tab of the playground, and a step of
// the README's "Try it".
type Example struct {
	// Name is the file's name without its extension, e.g. "03-execute-code".
	Name string
	// Query is the operation with its explaining comments.
	Query string
	// Variables is the tab's variables as JSON ("" when it has none): each
	// value says what to paste there.
	Variables string
}

// Examples returns the example operations in the order of the flow.
func Examples() []Example {
	entries, err := fs.ReadDir(files, "examples")
	if err != nil {
		panic(err) // embedded: cannot fail
	}
	var out []Example
	for _, e := range entries {
		raw, err := fs.ReadFile(files, "examples/"+e.Name())
		if err != nil {
			panic(err)
		}
		ex := Example{Name: strings.TrimSuffix(e.Name(), ".graphql")}
		var query strings.Builder
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "# variables:"); ok {
				ex.Variables = strings.TrimSpace(v)
				continue
			}
			query.WriteString(sc.Text())
			query.WriteByte('\n')
		}
		ex.Query = query.String()
		out = append(out, ex)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// contentSecurityPolicy lets the page load scripts, styles and connections
// from its own server only (GraphiQL's fonts and icons are data: URLs inside
// its stylesheet; 'self' covers the websocket on the same host). Inline
// styles are allowed because GraphiQL sets style attributes; inline scripts
// are not.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the page at prefix (e.g. "/playground") and its files under
// prefix+"/": endpoint is the GraphQL path the page calls over HTTP and
// websockets on the same host, e.g. "/query".
func Handler(prefix, endpoint string) http.Handler {
	page, err := render(prefix, endpoint)
	if err != nil {
		panic(err) // embedded template and examples: cannot fail
	}
	pageTag := etag(page)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		if r.URL.Path == prefix || r.URL.Path == prefix+"/" {
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Content-Security-Policy", contentSecurityPolicy)
			h.Set("Cache-Control", "no-cache")
			serve(w, r, pageTag, page)
			return
		}
		name, ok := strings.CutPrefix(r.URL.Path, prefix+"/")
		if !ok || strings.Contains(name, "/") || (name != "app.js" && !isAsset(name)) {
			http.NotFound(w, r)
			return
		}
		file := "assets/" + name
		if name == "app.js" {
			file = name
		}
		data, err := fs.ReadFile(files, file)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		ctype := mime.TypeByExtension(path.Ext(name))
		if ctype == "" || strings.HasPrefix(name, "LICENSE") {
			ctype = "text/plain"
		}
		if !strings.Contains(ctype, "charset") {
			ctype += "; charset=utf-8"
		}
		h.Set("Content-Type", ctype)
		// Files are addressed by their hash (?v=…): a new binary's page
		// asks for new URLs, so the old ones may be kept for long.
		h.Set("Cache-Control", "public, max-age=86400")
		serve(w, r, etag(data), data)
	})
}

// serve writes data, or 304 when the client has this version.
func serve(w http.ResponseWriter, r *http.Request, tag string, data []byte) {
	w.Header().Set("ETag", tag)
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(data)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(data)
}

func isAsset(name string) bool {
	_, err := fs.Stat(files, "assets/"+name)
	return err == nil
}

func etag(data []byte) string {
	sum := sha256.Sum256(data)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}

// version is the hash of a served file, for cache-busting URLs.
func version(name string) string {
	data, err := fs.ReadFile(files, name)
	if err != nil {
		panic(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:6])
}

// pageData fills page.html.
type pageData struct {
	Prefix string
	Config template.JS // JSON read by app.js from a non-executable script element
	Files  map[string]string
}

func render(prefix, endpoint string) ([]byte, error) {
	tmpl, err := template.ParseFS(files, "page.html")
	if err != nil {
		return nil, err
	}
	type tab struct {
		Query     string `json:"query"`
		Variables string `json:"variables,omitempty"`
	}
	var tabs []tab
	for _, ex := range Examples() {
		tabs = append(tabs, tab{Query: ex.Query, Variables: ex.Variables})
	}
	cfg, err := json.Marshal(map[string]any{"endpoint": endpoint, "tabs": tabs})
	if err != nil {
		return nil, err
	}
	urls := map[string]string{"app.js": prefix + "/app.js?v=" + version("app.js")}
	entries, _ := fs.ReadDir(files, "assets")
	for _, e := range entries {
		urls[e.Name()] = prefix + "/" + e.Name() + "?v=" + version("assets/"+e.Name())
	}
	var buf bytes.Buffer
	// The JSON is placed inside <script type="application/json">: "</" must
	// not end the element early.
	safe := strings.ReplaceAll(string(cfg), "</", `<\/`)
	if err := tmpl.Execute(&buf, pageData{Prefix: prefix, Config: template.JS(safe), Files: urls}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
