// Package blobstore keeps Zarr arrays in object storage: a zarr.Store over
// a gocloud.dev *blob.Bucket, and Open, which makes one from a URL —
// s3://bucket/prefix, gs://bucket/prefix, az://container/prefix (or
// azblob://) and file:///dir/prefix — with credentials from the usual
// environment of each service (AWS_ACCESS_KEY_ID or ~/.aws, Application
// Default Credentials, AZURE_STORAGE_ACCOUNT and its key or a managed
// identity).
//
// It is a package of its own so that package zarr stays free of the
// cloud SDKs: a program that reads only local arrays need not link them.
//
// What the Store does for a bucket:
//
//   - GetRange is one ranged GET (NewRangeReader): a shard's index and the
//     chunks a region needs are read alone, never the whole shard. The
//     last n bytes (a shard index at the end) are one GET with a suffix
//     range on S3, and a HEAD then a ranged GET elsewhere.
//   - Put is one upload, which a bucket makes visible only once it is
//     whole (a blob write is atomic: nothing is seen until Close
//     succeeds), so a shard is replaced whole or not at all.
//   - List lists by prefix; Delete deletes (a missing key is no error).
//   - Requests in flight are bounded (Options.Concurrency, 16 by default),
//     and the Store asks package zarr, through Concurrency, for that many
//     chunk reads at once.
//   - Transient failures — HTTP 5xx, 408 and 429, timeouts, connections
//     reset or dropped, a body cut short — are retried with exponential
//     backoff and full jitter, up to Options.Retry.Attempts tries, each
//     wait at most Options.Retry.Max; the context's end stops the waits
//     and the requests at once. For S3 the SDK retries each HTTP request
//     with the same backoff too (an upload of many parts retries a part,
//     not the whole); a read whose body breaks after its headers is
//     retried here.
//
// For S3-compatible servers (MinIO, Ceph, a test's loopback server) the
// endpoint comes from the URL's endpoint= parameter, else from
// AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL; with an endpoint, path-style
// addressing is on and the region is us-east-1 unless the URL
// (use_path_style=false, region=) or AWS_REGION says otherwise. The other
// query parameters are gocloud's (gocloud.dev/aws.V2ConfigFromURLParams
// and s3blob's: region, profile, anonymous, disable_https, ssetype, …).
package blobstore
