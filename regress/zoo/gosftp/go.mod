module hpn-patches/regress/zoo/gosftp

go 1.19

require github.com/pkg/sftp v1.13.6

require (
	github.com/kr/fs v0.1.0 // indirect
	golang.org/x/crypto v0.1.0 // indirect
	golang.org/x/sys v0.1.0 // indirect
)
