package s3sync

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
)

func TestZZProbe(t *testing.T) {
	if os.Getenv("PROBE") == "" {
		t.Skip()
	}
	c, err := NewClient(context.Background(), ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	api := c.store.(*s3Store).api
	body := make([]byte, 10000)
	st := c.store.(*s3Store)
	for _, mode := range []string{"raw", "tm", "store", "raw"} {
		start := time.Now()
		for i := 0; i < 200; i++ {
			key := fmt.Sprintf("m%s/%d", mode, i)
			var err error
			switch mode {
			case "raw":
				_, err = api.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("bench"), Key: aws.String(key), Body: bytes.NewReader(body)})
			case "tm":
				_, err = st.tm.UploadObject(context.Background(), &transfermanager.UploadObjectInput{Bucket: aws.String("bench"), Key: aws.String(key), Body: bytes.NewReader(body)})
			case "store":
				_, err = st.upload(context.Background(), transfer{bucket: "bench", key: key, size: 10000, sha: sha256Hex(body)}, bytes.NewReader(body))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %v per PUT", mode, time.Since(start)/200)
	}
	for _, conc := range []int{1, 4, 16, 64} {
		start := time.Now()
		var wg sync.WaitGroup
		ch := make(chan int)
		for w := 0; w < conc; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range ch {
					_, err := api.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("bench"), Key: aws.String(fmt.Sprintf("probe%d/%d", conc, i)), Body: bytes.NewReader(body)})
					if err != nil {
						t.Error(err)
					}
				}
			}()
		}
		for i := 0; i < 500; i++ {
			ch <- i
		}
		close(ch)
		wg.Wait()
		t.Logf("conc %d: %v per 500 PUTs", conc, time.Since(start))
	}
}
