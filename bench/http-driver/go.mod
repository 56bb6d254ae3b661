module bus-booking/bench/http-driver

go 1.23.0

require github.com/valyala/fasthttp v1.65.0

require (
	github.com/andybalholm/brotli v1.2.0 // indirect
	github.com/klauspost/compress v1.18.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
)
