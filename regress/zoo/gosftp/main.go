// gosftp: Go's github.com/pkg/sftp as an SFTP server on standard input
// and output, for sftp -D and scp -D (regress/t-zoo.sh).  pkg/sftp runs
// reads and writes on worker goroutines, so requests of one file may
// take effect in another order than they came: the behaviour of SFTPGo,
// rclone serve sftp and other servers built on it.
//
// usage: gosftp server|request
//
//	server	sftp.NewServer: the package's own file system server
//	request	sftp.NewRequestServer with a handler on the local file
//		system, as services built on pkg/sftp serve their own
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/pkg/sftp"
)

type stdio struct {
	io.Reader
	io.WriteCloser
}

// osfs serves the local file system through the request server.
type osfs struct{}

func (osfs) Fileread(r *sftp.Request) (io.ReaderAt, error) {
	return os.Open(r.Filepath)
}

func (osfs) Filewrite(r *sftp.Request) (io.WriterAt, error) {
	fl := os.O_WRONLY
	pf := r.Pflags()
	if pf.Creat {
		fl |= os.O_CREATE
	}
	if pf.Trunc {
		fl |= os.O_TRUNC
	}
	if pf.Excl {
		fl |= os.O_EXCL
	}
	return os.OpenFile(r.Filepath, fl, 0644)
}

func (osfs) Filecmd(r *sftp.Request) error {
	switch r.Method {
	case "Setstat":
		a := r.Attributes()
		fl := r.AttrFlags()
		if fl.Size {
			if err := os.Truncate(r.Filepath, int64(a.Size)); err != nil {
				return err
			}
		}
		if fl.Permissions {
			if err := os.Chmod(r.Filepath, a.FileMode()&os.ModePerm); err != nil {
				return err
			}
		}
		if fl.Acmodtime {
			if err := os.Chtimes(r.Filepath, time.Unix(int64(a.Atime), 0),
				time.Unix(int64(a.Mtime), 0)); err != nil {
				return err
			}
		}
		return nil
	case "Rename", "PosixRename":
		return os.Rename(r.Filepath, r.Target)
	case "Rmdir":
		return os.Remove(r.Filepath)
	case "Remove":
		return os.Remove(r.Filepath)
	case "Mkdir":
		return os.Mkdir(r.Filepath, 0755)
	case "Symlink":
		return os.Symlink(r.Filepath, r.Target)
	case "Link":
		return os.Link(r.Filepath, r.Target)
	}
	return fmt.Errorf("unsupported: %s", r.Method)
}

type infos []os.FileInfo

func (l infos) ListAt(f []os.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(f, l[off:])
	if n < len(f) {
		return n, io.EOF
	}
	return n, nil
}

func (osfs) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	switch r.Method {
	case "List":
		ents, err := os.ReadDir(r.Filepath)
		if err != nil {
			return nil, err
		}
		l := make(infos, 0, len(ents))
		for _, e := range ents {
			if fi, err := e.Info(); err == nil {
				l = append(l, fi)
			}
		}
		return l, nil
	case "Stat":
		fi, err := os.Stat(r.Filepath)
		if err != nil {
			return nil, err
		}
		return infos{fi}, nil
	case "Readlink":
		t, err := os.Readlink(r.Filepath)
		if err != nil {
			return nil, err
		}
		return infos{namedInfo{t}}, nil
	}
	return nil, fmt.Errorf("unsupported: %s", r.Method)
}

func (osfs) Lstat(r *sftp.Request) (sftp.ListerAt, error) {
	fi, err := os.Lstat(r.Filepath)
	if err != nil {
		return nil, err
	}
	return infos{fi}, nil
}

// RealPath keeps paths as the local file system has them.
func (osfs) RealPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		wd, _ := os.Getwd()
		p = filepath.Join(wd, p)
	}
	return filepath.Clean(p), nil
}

// namedInfo carries a link's target as a name, as Readlink wants it.
type namedInfo struct{ name string }

func (n namedInfo) Name() string       { return n.name }
func (n namedInfo) Size() int64        { return 0 }
func (n namedInfo) Mode() os.FileMode  { return 0 }
func (n namedInfo) ModTime() time.Time { return time.Time{} }
func (n namedInfo) IsDir() bool        { return false }
func (n namedInfo) Sys() interface{}   { return nil }

func main() {
	rw := stdio{os.Stdin, os.Stdout}
	mode := "server"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	var err error
	switch mode {
	case "server":
		var s *sftp.Server
		if s, err = sftp.NewServer(rw); err == nil {
			err = s.Serve()
		}
	case "request":
		h := sftp.Handlers{FileGet: osfs{}, FilePut: osfs{},
			FileCmd: osfs{}, FileList: osfs{}}
		err = sftp.NewRequestServer(rw, h).Serve()
	default:
		fmt.Fprintln(os.Stderr, "usage: gosftp server|request")
		os.Exit(2)
	}
	if err != nil && err != io.EOF {
		fmt.Fprintln(os.Stderr, "gosftp:", err)
		os.Exit(1)
	}
}
