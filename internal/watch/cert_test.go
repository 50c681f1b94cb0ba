package watch_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/safehttp"
	"github.com/algoitny/api/internal/watch"
)

// tlsTarget is an https server on 127.0.0.1 whose certificate, signed by a
// CA of the test's, expires at notAfter; the pool trusts that CA.
func tlsTarget(t *testing.T, notAfter time.Time) (*httptest.Server, *x509.CertPool) {
	t.Helper()
	caKey := algoitnytest.Must[*ecdsa.PrivateKey](t)(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour), KeyUsage: x509.KeyUsageCertSign,
	}
	caDER := algoitnytest.Must[[]byte](t)(x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey))
	caCert := algoitnytest.Must[*x509.Certificate](t)(x509.ParseCertificate(caDER))
	key := algoitnytest.Must[*ecdsa.PrivateKey](t)(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER := algoitnytest.Must[[]byte](t)(x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey))
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return srv, pool
}

func TestCertificateExpiry(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		in    time.Duration
		warns bool
	}{
		{"ExpiresSoon", 3 * 24 * time.Hour, true},
		{"FarAway", 90 * 24 * time.Hour, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			notAfter := time.Now().Add(c.in).Truncate(time.Second)
			srv, pool := tlsTarget(t, notAfter)
			db := newDB(t)
			client := safehttp.New(safehttp.Config{AllowHosts: []string{"127.0.0.1"}, RootCAs: pool, Timeout: 2 * time.Second})
			svc := &watch.Service{Store: db, URLs: client, MinDelayMs: 100}
			exec := &watch.Executor{Store: db, Prober: &watch.Prober{Fetch: client, Timeout: 2 * time.Second}}
			u := as("u", testPlan())
			check := algoitnytest.Must[*algoitny.Check](t)(svc.Create(u, algoitny.CheckInput{URL: srv.URL, Type: algoitny.CheckAvailability, DelayMs: 100}))
			out, err := exec.RunDue(context.Background(), check.ID)
			algoitnytest.OK(t, err)
			r := out.Result
			if r.Status != algoitny.CheckUp || r.CertNotAfter == nil || !r.CertNotAfter.Equal(notAfter) || r.CertExpiresSoon != c.warns {
				t.Fatalf("result %+v (cert %v)", r, r.CertNotAfter)
			}
			// Stored with the result and on the check.
			got := algoitnytest.Must[*algoitny.Check](t)(svc.Get(u, check.ID))
			if exp := got.CertificateExpiresAt(); exp == nil || !exp.Equal(notAfter) || got.CertificateWarning() != c.warns {
				t.Fatalf("check certificate %v warning %t", exp, got.CertificateWarning())
			}
			res := algoitnytest.Must[[]*algoitny.CheckResult](t)(svc.RecentResults(u, check.ID, 1))
			if res[0].CertNotAfter == nil || res[0].CertExpiresSoon != c.warns {
				t.Fatalf("stored result %+v", res[0])
			}
		})
	}

	t.Run("PlainHTTPHasNone", func(t *testing.T) {
		t.Parallel()
		f := setup(t, true)
		tg := newTarget(t)
		c := algoitnytest.Must[*algoitny.Check](t)(f.svc.Create(as("u", testPlan()), algoitny.CheckInput{URL: tg.URL, Type: algoitny.CheckAvailability, DelayMs: 100}))
		if out := f.run(t, c.ID); out.Result.CertNotAfter != nil || out.Check.CertificateWarning() {
			t.Fatalf("http result %+v", out.Result)
		}
	})
}
