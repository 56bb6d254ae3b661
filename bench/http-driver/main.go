// The bench's HTTP load driver: keeps a fixed number of keep-alive connections busy with a list of requests in
// turn and answers the throughput and latency percentiles as one JSON line.
//
// Not a Node driver (autocannon): it spent 0.13 ms of CPU per request on the same two cores as the server under
// test, and an answer waited in its one event loop behind the others that arrived with it, so part of each latency
// was the driver's. fasthttp's client costs a third of that and reads each connection in a goroutine of its own.
// Not bombardier, built on the same client: it sends one fixed request, and the bench turns through paths and
// tokens so that no one cache line or account carries the load.
//
// Input (standard input): {"url", "connections", "durationSeconds" or "amount", "timeoutSeconds",
// "requests": [{"method", "path", "headers", "body"}]}. Output (standard output):
// {"requests", "requestsPerSecond", "p50Ms", "p99Ms", "non2xx", "errors"}.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

type request struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers"`
	Body    *string           `json:"body"`
}

type job struct {
	URL             string    `json:"url"`
	Connections     int       `json:"connections"`
	DurationSeconds float64   `json:"durationSeconds"`
	Amount          int64     `json:"amount"`
	TimeoutSeconds  float64   `json:"timeoutSeconds"`
	Requests        []request `json:"requests"`
}

type outcome struct {
	Requests          int64   `json:"requests"`
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	P50Ms             float64 `json:"p50Ms"`
	P99Ms             float64 `json:"p99Ms"`
	Non2xx            int64   `json:"non2xx"`
	Errors            int64   `json:"errors"`
}

func readJob() (job, error) {
	var work job
	if err := json.NewDecoder(os.Stdin).Decode(&work); err != nil {
		return work, fmt.Errorf("reading the job from standard input: %w", err)
	}
	switch {
	case work.Connections < 1:
		return work, errors.New("connections must be at least 1")
	case len(work.Requests) == 0:
		return work, errors.New("requests must list at least one request")
	case (work.DurationSeconds > 0) == (work.Amount > 0):
		return work, errors.New("give either durationSeconds or amount, above zero")
	case work.TimeoutSeconds <= 0:
		return work, errors.New("timeoutSeconds must be above zero")
	}
	return work, nil
}

// templates prepares every request once; a connection copies one per send, as fasthttp requests are not shared.
func templates(target *url.URL, requests []request) []*fasthttp.Request {
	prepared := make([]*fasthttp.Request, len(requests))
	for index, described := range requests {
		prepared[index] = fasthttp.AcquireRequest()
		prepared[index].Header.SetMethod(described.Method)
		prepared[index].SetRequestURI(target.Scheme + "://" + target.Host + described.Path)
		for name, value := range described.Headers {
			prepared[index].Header.Set(name, value)
		}
		if described.Body != nil {
			prepared[index].Header.SetContentType("application/json")
			prepared[index].SetBodyString(*described.Body)
		}
	}
	return prepared
}

// percentile is the nearest-rank percentile of sorted latencies, in milliseconds.
func percentile(sortedMicroseconds []int64, fraction float64) float64 {
	if len(sortedMicroseconds) == 0 {
		return 0
	}
	rank := int(fraction*float64(len(sortedMicroseconds))+0.999999) - 1
	rank = max(0, min(rank, len(sortedMicroseconds)-1))
	return float64(sortedMicroseconds[rank]) / 1000
}

func run(work job) (outcome, error) {
	target, err := url.Parse(work.URL)
	if err != nil || target.Host == "" || target.Scheme != "http" {
		return outcome{}, fmt.Errorf("url must be an http:// address, got %q", work.URL)
	}
	client := &fasthttp.HostClient{
		Addr:                          target.Host,
		MaxConns:                      work.Connections,
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
		// Answers are read and dropped; a larger body only costs a bigger buffer.
		MaxResponseBodySize: 64 << 20,
	}
	prepared := templates(target, work.Requests)
	timeout := time.Duration(work.TimeoutSeconds * float64(time.Second))
	deadline := time.Now().Add(time.Duration(work.DurationSeconds * float64(time.Second)))
	var sent, non2xx, failed atomic.Int64
	latencies := make([][]int64, work.Connections)
	var connections sync.WaitGroup
	started := time.Now()
	for connection := range work.Connections {
		connections.Add(1)
		go func() {
			defer connections.Done()
			outgoing := fasthttp.AcquireRequest()
			incoming := fasthttp.AcquireResponse()
			for {
				index := sent.Add(1) - 1
				if work.Amount > 0 && index >= work.Amount || work.Amount == 0 && time.Now().After(deadline) {
					return
				}
				prepared[index%int64(len(prepared))].CopyTo(outgoing)
				sentAt := time.Now()
				if err := client.DoTimeout(outgoing, incoming, timeout); err != nil {
					failed.Add(1)
					continue
				}
				latencies[connection] = append(latencies[connection], time.Since(sentAt).Microseconds())
				if status := incoming.StatusCode(); status < 200 || status > 299 {
					non2xx.Add(1)
				}
			}
		}()
	}
	connections.Wait()
	elapsed := time.Since(started).Seconds()
	all := slices.Concat(latencies...)
	slices.Sort(all)
	answered := int64(len(all))
	return outcome{
		Requests:          answered,
		RequestsPerSecond: float64(answered) / elapsed,
		P50Ms:             percentile(all, 0.50),
		P99Ms:             percentile(all, 0.99),
		Non2xx:            non2xx.Load(),
		Errors:            failed.Load(),
	}, nil
}

func main() {
	work, err := readJob()
	if err == nil {
		var result outcome
		if result, err = run(work); err == nil {
			err = json.NewEncoder(os.Stdout).Encode(result)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "http-driver: %v\n", err)
		os.Exit(1)
	}
}
