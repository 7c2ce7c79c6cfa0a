// Package s3test serves a real S3-compatible server (gofakes3, in memory)
// on loopback for tests: the HTTP requests a bucket gets, recorded, and a
// fraction of them failed on request. It is imported only by _test files.
package s3test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Server is a real S3-compatible server (gofakes3, in memory) on
// loopback, behind a handler that records every request and can fail a
// fraction of them: the same HTTP requests a bucket gets, and the
// failures a bucket gives (500, 503 SlowDown, a connection dropped before
// or after the request was carried out).
type Server struct {
	Endpoint string // http://127.0.0.1:port
	Bucket   string

	mu       sync.Mutex
	rng      *rand.Rand
	failRate float64
	stall    time.Duration // how long each request waits before it is served
	log      []string      // "GET key bytes=…", one a request
	failed   int
	inner    http.Handler
}

// New starts a server with bucket "vol" and points the AWS
// environment at it: fixed test credentials, no shared config, no
// instance metadata (nothing leaves loopback).
func New(t *testing.T) *Server {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket("vol"); err != nil {
		t.Fatal(err)
	}
	s := &Server{Bucket: "vol", rng: rand.New(rand.NewPCG(1, 2)),
		inner: gofakes3.New(backend, gofakes3.WithLogger(gofakes3.DiscardLog())).Server()}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	s.Endpoint = srv.URL
	for k, v := range awsEnv {
		t.Setenv(k, v)
	}
	return s
}

// awsEnv gives the SDK fixed test credentials and no shared config, no
// instance metadata and no endpoint from outside.
var awsEnv = map[string]string{
	"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_SESSION_TOKEN": "",
	"AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_PROFILE": "",
	"AWS_CONFIG_FILE": "/nonexistent", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
	"AWS_EC2_METADATA_DISABLED": "true", "AWS_ENDPOINT_URL": "", "AWS_ENDPOINT_URL_S3": "",
}

// URL is the s3:// URL of path in the bucket, with the endpoint.
func (s *Server) URL(path string) string {
	return "s3://" + s.Bucket + "/" + path + "?endpoint=" + s.Endpoint
}

// Fail makes a fraction rate of the requests from now on fail, drawn from
// a fixed seed.
func (s *Server) Fail(rate float64, seed uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failRate, s.rng = rate, rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// Reset forgets the requests logged so far.
func (s *Server) Reset() (log []string, failed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	log, failed = s.log, s.failed
	s.log, s.failed = nil, 0
	return log, failed
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	entry := r.Method + " " + strings.TrimPrefix(r.URL.Path, "/"+s.Bucket+"/")
	if rg := r.Header.Get("Range"); rg != "" {
		entry += " " + rg
	}
	s.log = append(s.log, entry)
	mode := -1
	if s.failRate > 0 && s.rng.Float64() < s.failRate {
		mode = s.rng.IntN(4)
		s.failed++
	}
	stall := s.stall
	s.mu.Unlock()
	if stall > 0 {
		// Read the body first: the server notices a client gone only
		// once it has, and this request's context ends then.
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		select {
		case <-time.After(stall):
		case <-r.Context().Done():
			return
		}
	}
	switch mode {
	case 0:
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected</Message></Error>`))
	case 1:
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>injected</Message></Error>`))
	case 2:
		// The connection drops before the request is carried out.
		drop(w)
	case 3:
		// The request is carried out, and its answer lost: a retried PUT
		// or DELETE must be harmless.
		s.inner.ServeHTTP(httptest.NewRecorder(), r)
		drop(w)
	default:
		s.inner.ServeHTTP(w, r)
	}
}

// drop closes the connection under a request, without an answer.
func drop(w http.ResponseWriter) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	buf.Flush()
	conn.Close()
}

// Count is how many logged requests begin with prefix ("GET a/c/0").
func Count(log []string, prefix string) int {
	n := 0
	for _, e := range log {
		if strings.HasPrefix(e, prefix) {
			n++
		}
	}
	return n
}

// Stall makes each request from now on wait d before it is served (or
// until its client goes).
func (s *Server) Stall(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stall = d
}

// Env is the environment that points the AWS SDK at nothing but the
// server (for a child process): the variables New sets.
func (s *Server) Env() []string {
	var env []string
	for k, v := range awsEnv {
		env = append(env, k+"="+v)
	}
	return append(env, "AWS_ENDPOINT_URL_S3="+s.Endpoint)
}
