//go:build !ndconv_noazure

package blobstore

import (
	"errors"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	_ "gocloud.dev/blob/azureblob" // azblob:// (az://) on blob.DefaultURLMux
)

// The ndconv_noazure build tag leaves the Azure driver out (about 4 MB).
func init() {
	statusOf = append(statusOf, func(err error) int {
		var az *azcore.ResponseError
		if errors.As(err, &az) {
			return az.StatusCode
		}
		return 0
	})
}
