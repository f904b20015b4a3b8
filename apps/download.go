package apps

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Download is one file a view asks the host to download (ui/download-file,
// an EmbeddedResource of its contents), checked and decoded.
type Download struct {
	// Name is the file name the view suggests: the last segment of the
	// resource's uri (draft spec "ui/download-file": "host SHOULD derive
	// the filename from the last segment of resource.uri"), sanitised by
	// SanitizeFileName, so that it names a file in the directory it is
	// saved in and nothing else.
	Name string
	// URI is the resource's uri as the view sent it, to show.
	URI string
	// MIMEType is the resource's mimeType as the view sent it ("" when it
	// gave none), to show.
	MIMEType string
	// Data is the content: the text's UTF-8 bytes, or the blob decoded.
	Data []byte
}

// maxDownloadFiles bounds the files of one ui/download-file: the person
// is asked about them all in one question, which must stay readable.
const maxDownloadFiles = 16

// maxFileName bounds a sanitised file name, in bytes: file systems take
// 255, and a name already taken gets " (99)" added.
const maxFileName = 200

// maxNameSuffix is the highest " (N)" tried for a name already taken.
const maxNameSuffix = 99

// parseDownload checks the params of a ui/download-file (draft spec
// "ui/download-file": contents, an array of EmbeddedResource or
// ResourceLink) and decodes its files, at most max bytes in all. The
// errors are the answers for the view: "Invalid content" for what the
// spec does not allow, "Policy violation" for what the host does not do.
//
// Resource links are refused. The draft says only that "the host can
// retrieve the content directly from the URI" (its example an https
// URL); mcpx does not fetch what a view names: that would be a request
// from the person's machine, outside the view's Content-Security-Policy,
// to wherever the view points it (a local service included). A view can
// send the content itself, as an EmbeddedResource.
func parseDownload(params json.RawMessage, max int64) ([]Download, *Error) {
	var p struct {
		Contents []json.RawMessage `json:"contents"`
	}
	if params == nil || json.Unmarshal(params, &p) != nil || len(p.Contents) == 0 {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid content: ui/download-file needs contents, an array of resources"}
	}
	if len(p.Contents) > maxDownloadFiles {
		return nil, &Error{Code: CodeRefused, Message: fmt.Sprintf("Policy violation: more than %d files in one download", maxDownloadFiles)}
	}
	var files []Download
	var total int64
	for i, raw := range p.Contents {
		var item struct {
			Type     string `json:"type"`
			Resource *struct {
				URI      string  `json:"uri"`
				MIMEType string  `json:"mimeType"`
				Text     *string `json:"text"`
				Blob     *string `json:"blob"`
			} `json:"resource"`
		}
		if json.Unmarshal(raw, &item) != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("Invalid content: contents[%d] is not a resource", i)}
		}
		switch item.Type {
		case "resource":
		case "resource_link":
			return nil, &Error{Code: CodeRefused, Message: "Policy violation: this host does not fetch resource links; send the content as an embedded resource"}
		default:
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("Invalid content: contents[%d] is of type %q, not resource or resource_link", i, clipString(item.Type, 40))}
		}
		r := item.Resource
		if r == nil || r.URI == "" || (r.Text == nil) == (r.Blob == nil) {
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("Invalid content: contents[%d].resource needs a uri and either text or blob", i)}
		}
		var data []byte
		if r.Text != nil {
			if total+int64(len(*r.Text)) > max {
				return nil, tooLarge(max)
			}
			data = []byte(*r.Text)
		} else {
			if total+int64(base64.StdEncoding.DecodedLen(len(*r.Blob))) > max+2 {
				return nil, tooLarge(max)
			}
			var err error
			if data, err = base64.StdEncoding.DecodeString(*r.Blob); err != nil {
				return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("Invalid content: contents[%d].resource.blob is not base64", i)}
			}
		}
		total += int64(len(data))
		if total > max {
			return nil, tooLarge(max)
		}
		files = append(files, Download{Name: fileNameFromURI(r.URI), URI: r.URI, MIMEType: r.MIMEType, Data: data})
	}
	return files, nil
}

func tooLarge(max int64) *Error {
	return &Error{Code: CodeRefused, Message: fmt.Sprintf("Policy violation: the download is larger than %d bytes", max)}
}

// fileNameFromURI is the last segment of uri's path (its opaque part for
// a URI without one), unescaped and sanitised: "file:///export.json" is
// export.json. Segments are split on the path's own slashes, so an
// escaped one ("a%2Fb") stays in the name, sanitised.
func fileNameFromURI(uri string) string {
	s := uri
	if u, err := url.Parse(uri); err == nil {
		s = u.EscapedPath()
		if u.Opaque != "" {
			s = u.Opaque
		}
	} else if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		s = s[i+1:]
	}
	if un, err := url.PathUnescape(s); err == nil {
		s = un
	}
	return SanitizeFileName(s)
}

// SanitizeFileName makes name, a file name a view suggests, safe to
// create in a directory the person chose (draft spec "ui/download-file":
// "Host SHOULD sanitize filenames to prevent path traversal"), on every
// system mcpx runs on: path separators (/ and \), control characters,
// Unicode format characters (a right-to-left override makes
// "cod.exe" look like "exe.doc") and the characters Windows forbids
// (<>:"|?*) become _; leading dots (a hidden file, "." or "..") and
// spaces, and trailing dots and spaces (which Windows drops), are
// removed; a leading - (read as an option by the commands it is given
// to) becomes _; a Windows device name (CON, NUL, COM1, ...) gets a
// leading _; invalid UTF-8 becomes _; a name longer than 200 bytes is
// cut, keeping its extension; and an empty result is "download".
func SanitizeFileName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(name, "_") {
		switch {
		case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0, unicode.Is(unicode.Cf, r),
			strings.ContainsRune(`/\<>:"|?*`, r):
			b.WriteByte('_')
		default:
			b.WriteRune(r)
		}
	}
	s := strings.TrimLeft(strings.TrimRight(b.String(), ". "), ". ")
	if len(s) > maxFileName {
		ext := filepath.Ext(s)
		if len(ext) > 20 || len(ext) == len(s) {
			ext = ""
		}
		stem := s[:len(s)-len(ext)]
		cut := maxFileName - len(ext)
		for cut > 0 && !utf8.RuneStart(stem[cut]) {
			cut--
		}
		s = strings.TrimRight(stem[:cut], ". ") + ext
	}
	if strings.HasPrefix(s, "-") {
		s = "_" + s[1:]
	}
	if windowsDevice(s) {
		s = "_" + s
	}
	if s == "" {
		return "download"
	}
	return s
}

// windowsDevice says whether name is one Windows keeps for a device,
// with any extension ("nul.txt" is NUL too).
func windowsDevice(name string) bool {
	stem, _, _ := strings.Cut(name, ".")
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	switch stem {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	for _, port := range []string{"COM", "LPT"} {
		if n, ok := strings.CutPrefix(stem, port); ok && (len(n) == 1 && n[0] >= '0' && n[0] <= '9' || n == "¹" || n == "²" || n == "³") {
			return true
		}
	}
	return false
}

// ErrNameTaken is what SaveDownload returns when the name and every
// " (N)" variant of it are taken.
var ErrNameTaken = errors.New("the file name is taken")

// SaveDownload writes d into dir, under d.Name (sanitised again), and
// returns the path written. It never replaces a file: when the name is
// taken, " (1)", " (2)", ... up to " (99)" is added before the
// extension, as browsers do; past that it fails (ErrNameTaken). The file
// is written whole or not at all: into a hidden temporary file in dir
// (.mcpx-download-*.part), synced, then linked to its name, which fails
// rather than replace a file created meanwhile (on a file system without
// hard links, the name is created empty, exclusively, and the temporary
// file renamed over it). The temporary file is removed in every case.
func SaveDownload(dir string, d Download) (string, error) { return saveDownload(dir, d, os.Link) }

// saveDownload is SaveDownload, with the hard link made by link (a test
// plays a file system without them).
func saveDownload(dir string, d Download, link func(oldname, newname string) error) (string, error) {
	name := SanitizeFileName(d.Name)
	tmp := filepath.Join(dir, ".mcpx-download-"+token()[:16]+".part")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return "", fmt.Errorf("saving %s in %s: %w", name, dir, err)
	}
	defer os.Remove(tmp)
	_, err = f.Write(d.Data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("saving %s in %s: %w", name, dir, err)
	}
	for n := 0; n <= maxNameSuffix; n++ {
		path := filepath.Join(dir, withSuffix(name, n))
		err := link(tmp, path)
		if err == nil {
			return path, nil
		}
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		// No hard links here: take the name exclusively, then move the
		// content onto it.
		r, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("saving %s: %w", path, err)
		}
		r.Close()
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(path)
			return "", fmt.Errorf("saving %s: %w", path, err)
		}
		return path, nil
	}
	return "", fmt.Errorf("saving %s in %s: %w, as are %q to %q", name, dir, ErrNameTaken, withSuffix(name, 1), withSuffix(name, maxNameSuffix))
}

// withSuffix is name with " (n)" before its extension, name itself for
// n = 0: "report.json", "report (1).json".
func withSuffix(name string, n int) string {
	if n == 0 {
		return name
	}
	ext := filepath.Ext(name)
	if ext == name {
		ext = ""
	}
	return fmt.Sprintf("%s (%d)%s", strings.TrimSuffix(name, ext), n, ext)
}
