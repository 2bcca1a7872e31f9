// Package s3sync is the sync engine between a local directory and an s3:// prefix (either
// way), over a small store client: listing, conditional writes, multipart transfers,
// progress. It knows nothing of tasks or the runner.
package s3sync
