//go:build !ndconv_nogcs

package blobstore

import (
	"errors"

	_ "gocloud.dev/blob/gcsblob" // gs:// on blob.DefaultURLMux
	"google.golang.org/api/googleapi"
)

// The GCS driver (and Google's SDK, gRPC among it) is most of what
// object storage adds to a binary (about 30 MB of 74): the ndconv_nogcs
// build tag leaves it out.
func init() {
	statusOf = append(statusOf, func(err error) int {
		var g *googleapi.Error
		if errors.As(err, &g) {
			return g.Code
		}
		return 0
	})
}
