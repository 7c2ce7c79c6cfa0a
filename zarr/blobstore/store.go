package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/ndconv/ndconv/zarr"
)

// maxValueBytes bounds one value read whole, as zarr's DirStore does: a
// shard larger than this is not a shard ndconv wrote or can decode.
const maxValueBytes = 1 << 31

// Retry says how a Store retries a request that failed for a reason that
// may pass (a 5xx, a timeout, a connection reset).
type Retry struct {
	// Attempts is how many times a request is tried in all (1: no
	// retries); 0 means 6.
	Attempts int
	// Base is the longest first wait; each wait after it may be twice as
	// long as the one before, up to Max. A wait is drawn uniformly from
	// zero to its bound (full jitter), so that many clients that failed
	// together do not retry together. 0 means 50 ms.
	Base time.Duration
	// Max bounds one wait; 0 means 5 s.
	Max time.Duration
	// Timeout bounds one try (a ranged GET, one upload), so that a
	// connection that hangs is given up and retried; 0 means 5 minutes.
	Timeout time.Duration
}

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = 6
	}
	if r.Base <= 0 {
		r.Base = 50 * time.Millisecond
	}
	if r.Max <= 0 {
		r.Max = 5 * time.Second
	}
	if r.Timeout <= 0 {
		r.Timeout = 5 * time.Minute
	}
	return r
}

// delay is the wait before try attempt+1 (attempt counts from 1): full
// jitter over min(Max, Base·2^(attempt-1)).
func (r Retry) delay(attempt int) time.Duration {
	bound := r.Max
	if attempt-1 < 30 && r.Base<<(attempt-1) < r.Max {
		bound = r.Base << (attempt - 1)
	}
	return rand.N(bound + 1)
}

// Options are a Store's settings; the zero value is the defaults.
type Options struct {
	// Concurrency bounds the requests in flight at once, and is how many
	// chunk reads zarr keeps going; 0 means 16.
	Concurrency int
	// Retry says how failed requests are retried.
	Retry Retry
}

// Store is a zarr.Store over a bucket: a key is the object Prefix+key.
// It is safe for concurrent use.
type Store struct {
	bucket *blob.Bucket
	prefix string
	retry  Retry
	sem    chan struct{}
	// suffix reads the last n bytes of an object in one request (S3),
	// instead of asking its size first.
	suffix bool
	owned  bool // Close closes the bucket
}

// New returns a Store over the objects of b whose keys begin with prefix
// ("" or a "/"-ended folder such as "volumes/brain.zarr/"). Closing the
// Store does not close b.
func New(b *blob.Bucket, prefix string, opt *Options) *Store {
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	prefix = strings.TrimLeft(prefix, "/")
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	var client *s3.Client
	return &Store{bucket: b, prefix: prefix, retry: o.Retry.withDefaults(),
		sem: make(chan struct{}, o.Concurrency), suffix: b.As(&client)}
}

// Bucket is the bucket the Store reads and writes.
func (s *Store) Bucket() *blob.Bucket { return s.bucket }

// Prefix is what the Store puts before each key.
func (s *Store) Prefix() string { return s.prefix }

// Concurrency implements zarr.ConcurrentStore.
func (s *Store) Concurrency() int { return cap(s.sem) }

// Close closes the bucket when the Store opened it (Open), else does
// nothing.
func (s *Store) Close() error {
	if s.owned {
		return s.bucket.Close()
	}
	return nil
}

// object is the bucket key of a store key, refusing keys that are not
// clean relative paths (as DirStore does), so that no key reaches outside
// the prefix.
func (s *Store) object(key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") || strings.Contains(key, "\\") ||
		slices.ContainsFunc(strings.Split(key, "/"), func(p string) bool { return p == "" || p == "." || p == ".." }) {
		return "", &zarr.ArgumentError{Arg: "key", Msg: fmt.Sprintf("%q is not a clean relative key", key)}
	}
	return s.prefix + key, nil
}

// do runs one request, f, under the concurrency bound, retrying it while
// it fails transiently and ctx lasts. Each try has its own deadline.
func (s *Store) do(ctx context.Context, what, key string, f func(ctx context.Context) error) error {
	for attempt := 1; ; attempt++ {
		select {
		case s.sem <- struct{}{}:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		tctx, cancel := context.WithTimeout(ctx, s.retry.Timeout)
		err := f(tctx)
		cancel()
		<-s.sem
		if err == nil {
			return nil
		}
		if cerr := context.Cause(ctx); cerr != nil {
			return cerr
		}
		if attempt >= s.retry.Attempts || !transient(err) {
			if attempt > 1 {
				return fmt.Errorf("zarr: %s %s: %w (after %d tries)", what, key, err, attempt)
			}
			return fmt.Errorf("zarr: %s %s: %w", what, key, err)
		}
		t := time.NewTimer(s.retry.delay(attempt))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		}
	}
}

// errShort is a body that ended before the bytes asked for: a connection
// cut mid-transfer (retried), or an object shorter than the range
// (checked against its size before it is called transient).
var errShort = errors.New("body ended early")

// transient reports whether err may pass on a retry: a server error or
// throttling, a timeout of one try, a connection reset, refused or cut.
func transient(err error) bool {
	switch gcerrors.Code(err) {
	case gcerrors.NotFound, gcerrors.PermissionDenied, gcerrors.InvalidArgument, gcerrors.FailedPrecondition,
		gcerrors.AlreadyExists, gcerrors.Unimplemented, gcerrors.Canceled:
		return false
	case gcerrors.Internal, gcerrors.ResourceExhausted, gcerrors.DeadlineExceeded:
		return true
	}
	if status := httpStatus(err); status != 0 {
		return status >= 500 || status == 408 || status == 429
	}
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return false // a host that does not exist (a misspelt endpoint)
	}
	var ne net.Error
	return errors.Is(err, errShort) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) || errors.As(err, &ne) ||
		// The SDKs' own words for a connection cut under them.
		strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "broken pipe") ||
		strings.Contains(err.Error(), "server closed") || strings.Contains(err.Error(), "unexpected EOF")
}

// httpStatus is the HTTP status of the response an error came from (the
// AWS, Google and Azure SDKs each carry it their own way), or 0.
func httpStatus(err error) int {
	var aws interface{ HTTPStatusCode() int }
	if errors.As(err, &aws) {
		return aws.HTTPStatusCode()
	}
	for _, f := range statusOf {
		if s := f(err); s != 0 {
			return s
		}
	}
	return 0
}

// statusOf are the drivers' ways to find an error's HTTP status, added by
// the files that link them in (drivers_gcs.go, drivers_azure.go).
var statusOf []func(error) int

func notFound(key string, err error) error {
	if gcerrors.Code(err) == gcerrors.NotFound {
		return fmt.Errorf("%w: %s", zarr.ErrNotFound, key)
	}
	return err
}

// Get implements zarr.Store: one GET.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	obj, err := s.object(key)
	if err != nil {
		return nil, err
	}
	var out []byte
	err = s.do(ctx, "reading", key, func(ctx context.Context) error {
		r, err := s.bucket.NewReader(ctx, obj, nil)
		if err != nil {
			return notFound(key, err)
		}
		defer r.Close()
		size := r.Size()
		if size > maxValueBytes {
			return &zarr.FormatError{Key: key, Msg: fmt.Sprintf("%d bytes, more than the %d a value may hold", size, int64(maxValueBytes))}
		}
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("%w: %w", errShort, err)
		}
		out = b
		return nil
	})
	return out, err
}

// GetRange implements zarr.Store: one ranged GET (and, for the last n
// bytes of an object outside S3, a HEAD for its size first).
func (s *Store) GetRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	obj, err := s.object(key)
	if err != nil {
		return nil, err
	}
	if n < 0 || n > maxValueBytes {
		return nil, &zarr.FormatError{Key: key, Msg: fmt.Sprintf("%d bytes asked for", n)}
	}
	if off < 0 && !s.suffix {
		var size int64
		err := s.do(ctx, "reading the size of", key, func(ctx context.Context) error {
			a, err := s.bucket.Attributes(ctx, obj)
			if err != nil {
				return notFound(key, err)
			}
			size = a.Size
			return nil
		})
		if err != nil {
			return nil, err
		}
		if off = size - n; off < 0 {
			return nil, &zarr.FormatError{Key: key, Msg: fmt.Sprintf("holds %d bytes; the last %d were asked for", size, n)}
		}
	}
	var out []byte
	err = s.do(ctx, "reading", key, func(ctx context.Context) error {
		var opts *blob.ReaderOptions
		start := off
		if off < 0 {
			// S3: "bytes=-n" asks for the last n bytes, in the one request.
			start = 0
			opts = &blob.ReaderOptions{BeforeRead: func(as func(any) bool) error {
				var in *s3.GetObjectInput
				if !as(&in) {
					return errors.New("blobstore: not an S3 read")
				}
				r := fmt.Sprintf("bytes=-%d", n)
				in.Range = &r
				return nil
			}}
		}
		if n == 0 {
			out = []byte{}
			return nil
		}
		r, err := s.bucket.NewRangeReader(ctx, obj, start, n, opts)
		if err != nil {
			if code := httpStatus(err); code == 416 {
				return &zarr.FormatError{Key: key, Msg: fmt.Sprintf("bytes %d to %d were asked for; the value is shorter", off, off+n)}
			}
			return notFound(key, err)
		}
		defer r.Close()
		size := r.Size()
		if (off >= 0 && size >= 0 && off+n > size) || (off < 0 && size >= 0 && n > size) {
			return &zarr.FormatError{Key: key, Msg: fmt.Sprintf("holds %d bytes; bytes %d to %d were asked for", size, off, off+n)}
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("%w: %w", errShort, err)
		}
		out = b
		return nil
	})
	return out, err
}

// Put implements zarr.Store: one upload, visible whole or not at all.
func (s *Store) Put(ctx context.Context, key string, data []byte) error {
	obj, err := s.object(key)
	if err != nil {
		return err
	}
	return s.do(ctx, "writing", key, func(ctx context.Context) error {
		// Upload over a fresh reader each try: WriteAll's MD5 is checked
		// by the server, so bytes garbled on the way are refused.
		return s.bucket.WriteAll(ctx, obj, data, &blob.WriterOptions{ContentType: "application/octet-stream"})
	})
}

// List implements zarr.Store.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	err := s.do(ctx, "listing", s.prefix+prefix, func(ctx context.Context) error {
		keys = keys[:0]
		it := s.bucket.List(&blob.ListOptions{Prefix: s.prefix + prefix})
		for {
			o, err := it.Next(ctx)
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			if o.IsDir {
				continue
			}
			keys = append(keys, strings.TrimPrefix(o.Key, s.prefix))
		}
	})
	slices.Sort(keys)
	return keys, err
}

// Delete implements zarr.Store.
func (s *Store) Delete(ctx context.Context, key string) error {
	obj, err := s.object(key)
	if err != nil {
		return err
	}
	return s.do(ctx, "deleting", key, func(ctx context.Context) error {
		err := s.bucket.Delete(ctx, obj)
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil
		}
		return err
	})
}

// Exists reports whether the store holds any key under prefix ("" for any
// at all).
func (s *Store) Exists(ctx context.Context, prefix string) (bool, error) {
	found := false
	err := s.do(ctx, "listing", s.prefix+prefix, func(ctx context.Context) error {
		objs, _, err := s.bucket.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: s.prefix + prefix})
		found = len(objs) > 0
		return err
	})
	return found, err
}

var _ zarr.ConcurrentStore = (*Store)(nil)
