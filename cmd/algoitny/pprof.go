package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// startPprof serves the Go profiler on Config.PprofAddr, a listener of its
// own so that it is never reachable through the API's address.
func (m *Main) startPprof() error {
	l, err := net.Listen("tcp", m.Config.PprofAddr)
	if err != nil {
		return fmt.Errorf("ALGOITNY_PPROF_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	m.pprof = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = m.pprof.Serve(l) }()
	m.Logger.Info("pprof listening", "addr", l.Addr().String())
	return nil
}
