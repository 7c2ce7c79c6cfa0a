package blobstore

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/s3blob"

	"github.com/ndconv/ndconv/zarr"
)

// Schemes are the URL schemes Open knows.
var Schemes = []string{"s3", "gs", "az", "azblob", "file"}

// IsURL reports whether path is a URL Open knows (scheme://…), rather
// than a path of the local file system.
func IsURL(path string) bool {
	scheme, _, ok := strings.Cut(path, "://")
	if !ok {
		return false
	}
	for _, s := range Schemes {
		if strings.EqualFold(scheme, s) {
			return true
		}
	}
	return false
}

// SplitURL splits a URL into its bucket ("s3://bucket?query", the query
// kept) and the object path in it ("dir/x.zarr/group"), without slashes
// at either end. A file:// URL's path is absolute ("/data/x.zarr").
func SplitURL(raw string) (bucket *url.URL, path string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, "", &zarr.ArgumentError{Arg: "url", Msg: err.Error()}
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if !IsURL(u.Scheme + "://") {
		return nil, "", &zarr.ArgumentError{Arg: "url", Msg: fmt.Sprintf("%q: scheme %q is none of %s", raw, u.Scheme, strings.Join(Schemes, ", "))}
	}
	if u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return nil, "", &zarr.ArgumentError{Arg: "url", Msg: fmt.Sprintf("%q: a bucket URL has no user, fragment or opaque part", raw)}
	}
	path = u.Path
	if u.Scheme == "file" {
		if u.Host != "" && u.Host != "localhost" {
			return nil, "", &zarr.ArgumentError{Arg: "url", Msg: fmt.Sprintf("%q: a file URL names no host (file:///abs/path)", raw)}
		}
		if !strings.HasPrefix(path, "/") {
			return nil, "", &zarr.ArgumentError{Arg: "url", Msg: fmt.Sprintf("%q: a file URL's path is absolute (file:///abs/path)", raw)}
		}
		path = "/" + strings.Trim(path, "/")
	} else {
		if u.Host == "" {
			return nil, "", &zarr.ArgumentError{Arg: "url", Msg: fmt.Sprintf("%q names no bucket (%s://bucket/path)", raw, u.Scheme)}
		}
		path = strings.Trim(path, "/")
	}
	b := *u
	b.Path, b.RawPath = "", ""
	return &b, path, nil
}

// Open opens the store a URL names: its bucket, and the folder in it that
// the URL's path names, as the Store's prefix —
//
//	s3://bucket/dir/x.zarr?endpoint=http://127.0.0.1:9000
//	gs://bucket/dir/x.zarr
//	az://container/dir/x.zarr (azblob:// too)
//	file:///data/dir/x.zarr
//
// Credentials come from each service's usual environment. Close the
// Store to close its bucket. A file:// store is the bucket of the folder
// above the path (which must exist), so that the path itself is made by
// the first Put; files are written beside their final name and renamed
// (no_tmp_dir), and no sidecar metadata files are written (metadata=skip).
func Open(ctx context.Context, raw string, opt *Options) (*Store, error) {
	bu, path, err := SplitURL(raw)
	if err != nil {
		return nil, err
	}
	var o Options
	if opt != nil {
		o = *opt
	}
	o.Retry = o.Retry.withDefaults()
	var b *blob.Bucket
	prefix := path
	switch bu.Scheme {
	case "s3":
		b, err = openS3(ctx, bu, o.Retry)
	case "file":
		dir := filepath.Dir(filepath.FromSlash(path))
		prefix = filepath.Base(filepath.FromSlash(path))
		if path == "/" {
			dir, prefix = "/", ""
		}
		q := bu.Query()
		for k, v := range map[string]string{"metadata": "skip", "no_tmp_dir": "1"} {
			if !q.Has(k) {
				q.Set(k, v)
			}
		}
		fu := url.URL{Scheme: "file", Path: filepath.ToSlash(dir), RawQuery: q.Encode()}
		b, err = blob.OpenBucket(ctx, fu.String())
	case "az", "azblob":
		au := *bu
		au.Scheme = "azblob"
		b, err = blob.OpenBucket(ctx, au.String())
	default:
		b, err = blob.OpenBucket(ctx, bu.String())
	}
	if err != nil && strings.Contains(err.Error(), "no driver registered") {
		err = fmt.Errorf("%w (this ndconv was built without the %s driver: build without the ndconv_no%s tag)", err, bu.Scheme, map[string]string{"gs": "gcs", "az": "azure", "azblob": "azure"}[bu.Scheme])
	}
	if err != nil {
		return nil, fmt.Errorf("zarr: opening %s: %w", raw, err)
	}
	s := New(b, prefix, &o)
	s.owned = true
	return s, nil
}

var _ = fileblob.Scheme // file:// on blob.DefaultURLMux

// openS3 opens an S3 bucket as s3blob's URL opener does, with what
// S3-compatible servers need (an endpoint from the environment,
// path-style addressing, a region) and the SDK's retries set to Retry.
func openS3(ctx context.Context, u *url.URL, r Retry) (*blob.Bucket, error) {
	q := u.Query()
	endpoint := q.Get("endpoint")
	if endpoint == "" {
		for _, v := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
			if e := os.Getenv(v); e != "" {
				endpoint = e
				q.Set("endpoint", e)
				break
			}
		}
	}
	var s3opts []func(*s3.Options)
	var bopts s3blob.Options
	pathStyle := endpoint != ""
	for _, k := range []string{"use_path_style", "s3ForcePathStyle", "disable_https", "accelerate"} {
		v := q.Get(k)
		if v == "" {
			continue
		}
		q.Del(k)
		on, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("invalid value %q for %s: %w", v, k, err)
		}
		switch k {
		case "use_path_style", "s3ForcePathStyle":
			pathStyle = on
		case "disable_https":
			s3opts = append(s3opts, func(o *s3.Options) { o.EndpointOptions.DisableHTTPS = on })
		case "accelerate":
			s3opts = append(s3opts, func(o *s3.Options) { o.UseAccelerate = on })
		}
	}
	s3opts = append(s3opts, func(o *s3.Options) {
		o.UsePathStyle = pathStyle
		// A multipart object has no whole-object checksum to check; the
		// SDK would say so on stderr for every read of one.
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	if v := q.Get("ssetype"); v != "" {
		q.Del("ssetype")
		found := false
		for _, t := range s3types.ServerSideEncryptionAes256.Values() {
			if strings.EqualFold(string(t), v) {
				bopts.EncryptionType, found = t, true
			}
		}
		if !found {
			return nil, fmt.Errorf("invalid value %q for ssetype", v)
		}
	}
	if v := q.Get("kmskeyid"); v != "" {
		q.Del("kmskeyid")
		bopts.KMSEncryptionID = v
	}
	if endpoint != "" && q.Get("region") == "" && os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		// An S3-compatible server rarely cares, but the SDK signs for a
		// region and has none otherwise.
		q.Set("region", "us-east-1")
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, err
	}
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = r.Attempts
			o.MaxBackoff = r.Max
			o.Backoff = sdkBackoff{r}
			o.RateLimiter = ratelimit.None
		})
	}
	cfg.RetryMaxAttempts = 0
	bopts.RequestChecksumCalculation = cfg.RequestChecksumCalculation
	b, err := s3blob.OpenBucket(ctx, s3.NewFromConfig(cfg, s3opts...), u.Host, &bopts)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// sdkBackoff gives the AWS SDK's retryer Retry's waits.
type sdkBackoff struct{ r Retry }

func (b sdkBackoff) BackoffDelay(attempt int, _ error) (time.Duration, error) {
	if attempt < 1 {
		return 0, errors.New("blobstore: retry attempt below 1")
	}
	return b.r.delay(attempt), nil
}
