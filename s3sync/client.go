package s3sync

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// ClientOptions says where the object store is and how to reach it. Everything left empty
// comes from the environment (see docs/s3.md).
type ClientOptions struct {
	// Endpoint is the S3 endpoint URL, e.g. http://minio:9000; it wins over the environment.
	Endpoint string
	// Region wins over AWS_REGION and friends; the default is us-east-1.
	Region string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Logf receives warnings (a skipped symlinked directory, an unsupported setting); nil
	// discards them.
	Logf func(format string, args ...any)
}

// Client syncs between local files and one S3 endpoint. It is safe for concurrent use.
type Client struct {
	store    store
	endpoint string   // resolved endpoint, "" for AWS; part of the record's identity
	secrets  []string // credential values to scrub from error messages
	getenv   func(string) string
	logf     func(string, ...any)
}

// Retry policy: enough attempts, with backoff, to ride out an S3-compatible server that
// restarts for a few seconds in the middle of a transfer.
const (
	maxAttempts = 10
	maxBackoff  = 8 * time.Second
)

// Environment variables, standard first, then the lowercase names that older training images
// (boto-style configuration) use. The lowercase ones apply only when the standard ones are
// absent.
const (
	envAccessKey    = "AWS_ACCESS_KEY_ID"
	envSecretKey    = "AWS_SECRET_ACCESS_KEY"
	envSessionToken = "AWS_SESSION_TOKEN"
	envLegacyAccess = "aws_access_key_id"
	envLegacySecret = "aws_secret_access_key"
	envLegacyToken  = "aws_session_token"
)

// SecretEnvNames lists the environment variables that hold credentials, so that callers can
// mask their values in what they print.
func SecretEnvNames() []string {
	return []string{envAccessKey, envSecretKey, envSessionToken, envLegacyAccess, envLegacySecret, envLegacyToken}
}

// settings is what the environment and options resolve to, before the SDK adds its own
// sources (shared profiles, web identity, instance metadata).
type settings struct {
	endpoint     string
	region       string
	profile      string
	accessKey    string
	secretKey    string
	sessionToken string
	anonymous    bool
	warnings     []string
}

func firstEnv(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// resolveSettings applies runall's precedence: explicit options, then the standard AWS_*
// variables, then the lowercase legacy ones.
func resolveSettings(opts ClientOptions, getenv func(string) string) (settings, error) {
	var s settings
	s.endpoint = opts.Endpoint
	if s.endpoint == "" {
		s.endpoint = firstEnv(getenv, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "endpoint_url")
	}
	if s.endpoint != "" {
		u, err := url.Parse(s.endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return s, fmt.Errorf("endpoint %q is not an http:// or https:// URL (e.g. http://minio:9000)", s.endpoint)
		}
	}
	s.region = opts.Region
	if s.region == "" {
		s.region = firstEnv(getenv, "AWS_REGION", "AWS_DEFAULT_REGION", "region_name")
	}
	s.profile = firstEnv(getenv, "AWS_PROFILE")

	access, secret := getenv(envAccessKey), getenv(envSecretKey)
	token := getenv(envSessionToken)
	accessName, secretName := envAccessKey, envSecretKey
	if access == "" && secret == "" {
		access, secret, token = getenv(envLegacyAccess), getenv(envLegacySecret), getenv(envLegacyToken)
		accessName, secretName = envLegacyAccess, envLegacySecret
	}
	switch {
	case access != "" && secret == "":
		return s, fmt.Errorf("%s is set but %s is not: set both, or neither to use a profile or role", accessName, secretName)
	case access == "" && secret != "":
		return s, fmt.Errorf("%s is set but %s is not: set both, or neither to use a profile or role", secretName, accessName)
	}
	s.accessKey, s.secretKey, s.sessionToken = access, secret, token

	switch sv := strings.ToLower(getenv("signature_version")); sv {
	case "", "s3v4", "v4":
	case "unsigned":
		s.anonymous = true
	default:
		s.warnings = append(s.warnings, fmt.Sprintf("signature_version %q is not supported; signing with s3v4", sv))
	}
	return s, nil
}

// NewClient resolves credentials, region and endpoint, and builds a client. It makes no
// request: bad credentials show up on the first sync.
func NewClient(ctx context.Context, opts ClientOptions) (*Client, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s, err := resolveSettings(opts, getenv)
	if err != nil {
		return nil, err
	}
	for _, w := range s.warnings {
		logf("%s", w)
	}

	secrets := s.secrets()
	retryLog := func(format string, args ...any) { logf("%s", scrub(fmt.Sprintf(format, args...), secrets)) }
	cfg, err := config.LoadDefaultConfig(ctx, s.loadOptions(retryLog)...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	if s.endpoint == "" && cfg.BaseEndpoint != nil {
		s.endpoint = *cfg.BaseEndpoint // from a profile's endpoint_url
	}
	api := s3.NewFromConfig(cfg, func(o *s3.Options) {
		// Parts are sent straight from the file and checked by their CRC32C: waiting a
		// round trip for "100 Continue" before each would only slow them down.
		o.ContinueHeaderThresholdBytes = -1
		if s.endpoint != "" {
			o.BaseEndpoint = aws.String(s.endpoint)
			// Custom endpoints (MinIO and most S3-compatible servers) do not serve
			// virtual-hosted buckets.
			o.UsePathStyle = true
		}
	})

	return &Client{
		store:    newS3Store(api, retryLog),
		endpoint: s.endpoint,
		secrets:  secrets,
		getenv:   getenv,
		logf:     logf,
	}, nil
}

// secrets are what the client's messages never show: the secret key, the session token,
// an endpoint's password.
func (s settings) secrets() []string {
	var out []string
	for _, v := range []string{s.secretKey, s.sessionToken} {
		if len(v) >= 4 {
			out = append(out, v)
		}
	}
	if u, err := url.Parse(s.endpoint); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			out = append(out, p)
		}
	}
	return out
}

// loadOptions are the AWS configuration's options for s: connections, retries (said through
// retryLog, which scrubs secrets), checksums, region, profile and credentials.
func (s settings) loadOptions(retryLog func(string, ...any)) []func(*config.LoadOptions) error {
	httpClient := awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		// Many small objects in parallel: keep a connection per worker instead of the
		// default handful, or each request pays a new handshake.
		t.MaxIdleConns = 256
		t.MaxIdleConnsPerHost = max(connsPerHost, defaultConcurrency)
		t.ResponseHeaderTimeout = 2 * time.Minute
	})
	loadOpts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(httpClient),
		config.WithDefaultRegion("us-east-1"),
		config.WithRetryer(func() aws.Retryer {
			return newRetryer(retryLog)
		}),
		// S3-compatible servers (older MinIO, Ceph, ...) reject the CRC32 trailers the
		// SDK sends by default; ask for checksums only where the API requires them.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if s.region != "" {
		loadOpts = append(loadOpts, config.WithRegion(s.region))
	}
	if s.profile != "" {
		loadOpts = append(loadOpts, config.WithSharedConfigProfile(s.profile))
	}
	switch {
	case s.anonymous:
		loadOpts = append(loadOpts, config.WithCredentialsProvider(aws.AnonymousCredentials{}))
	case s.accessKey != "":
		loadOpts = append(loadOpts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(s.accessKey, s.secretKey, s.sessionToken)))
	}
	return loadOpts
}

// PutObject writes a small object (a marker such as _SUCCESS) at url, an s3:// URL.
func (c *Client) PutObject(ctx context.Context, rawURL string, body []byte) error {
	loc, err := parseS3URL(rawURL)
	if err != nil {
		return err
	}
	if loc.key == "" || strings.HasSuffix(loc.key, "/") {
		return fmt.Errorf("put %s: the URL names a prefix, not an object", rawURL)
	}
	_, err = c.store.upload(ctx, transfer{
		bucket: loc.bucket, key: loc.key, size: int64(len(body)), sums: sumBytes(body),
	}, bytes.NewReader(body))
	if err != nil {
		return c.wrap(err, "put %s", rawURL)
	}
	return nil
}

// Exists reports whether the object at url, an s3:// URL, exists.
func (c *Client) Exists(ctx context.Context, rawURL string) (bool, error) {
	loc, err := parseS3URL(rawURL)
	if err != nil {
		return false, err
	}
	_, err = c.store.head(ctx, loc.bucket, loc.key)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, errNotFound):
		return false, nil
	}
	return false, c.wrap(err, "check %s", rawURL)
}

// wrap adds context to an error from the store, scrubs any credential out of its text and
// adds a hint for the mistakes people make most.
func (c *Client) wrap(err error, format string, args ...any) error {
	err = fmt.Errorf(format+": %w", append(args, withHint(err))...)
	if len(c.secrets) == 0 {
		return err
	}
	return &scrubbedError{err: err, secrets: c.secrets}
}

// scrubbedError hides credential values from an error's text and keeps its chain for
// errors.Is and errors.As.
type scrubbedError struct {
	err     error
	secrets []string
}

func (e *scrubbedError) Error() string { return scrub(e.err.Error(), e.secrets) }

func (e *scrubbedError) Unwrap() error { return e.err }

func scrub(msg string, secrets []string) string {
	for _, s := range secrets {
		msg = strings.ReplaceAll(msg, s, "***")
	}
	return msg
}

// newRetryer is the SDK's standard retryer with more patience: see maxAttempts.
func newRetryer(logf func(string, ...any)) aws.Retryer {
	std := retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = maxAttempts
		o.MaxBackoff = maxBackoff
		// The default token bucket gives up after ~100 retries across all requests: a
		// restart during a 16-way transfer would exhaust it.
		o.RateLimiter = ratelimit.None
		// What MinIO answers while it shuts down or starts: worth another try.
		o.Retryables = append(o.Retryables,
			retry.RetryableHTTPStatusCode{Codes: map[int]struct{}{499: {}}},
			retry.RetryableErrorCode{Codes: map[string]struct{}{
				"ClientDisconnected":         {},
				"XMinioServerNotInitialized": {},
				"InternalError":              {},
			}})
	})
	return &noisyRetryer{RetryerV2: std, logf: logf}
}

// noisyRetryer says, at most every 10 s, that requests are being retried: a sync that
// rides out a server restart should not look hung.
type noisyRetryer struct {
	aws.RetryerV2
	logf func(string, ...any)
	mu   sync.Mutex
	last time.Time
}

func (r *noisyRetryer) RetryDelay(attempt int, err error) (time.Duration, error) {
	d, derr := r.RetryerV2.RetryDelay(attempt, err)
	r.mu.Lock()
	defer r.mu.Unlock()
	if time.Since(r.last) >= 10*time.Second {
		r.last = time.Now()
		r.logf("S3 request failed, retrying (attempt %d of %d): %v", attempt, maxAttempts, err)
	}
	return d, derr
}
