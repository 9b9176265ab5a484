package boltstore

import (
	"encoding/binary"
	"fmt"
	"os"
)

// checkPages walks the page tree of a bbolt file through plain reads of the
// file, before anything follows it through the memory map: every page a
// branch or bucket refers to must lie below the high-water mark, carry its
// own id, be a branch or leaf page, be referred to once, and hold elements
// whose keys and values lie inside the page. bbolt trusts these fields; a
// damaged one would make its readers, and its own consistency check (which
// runs in a goroutine of its own, where a fault cannot be recovered),
// read outside the file.
//
// The layout (bbolt's internal/common): a page is a 16-byte header (id u64,
// flags u16, count u16, overflow u32) and count 16-byte elements. A branch
// element is (pos u32, ksize u32, pgid u64), a leaf element (flags u32, pos
// u32, ksize u32, vsize u32), pos counting from the element itself. A leaf
// element with flag 1 is a bucket: its value is (root pgid u64, sequence
// u64), followed by an inline page when root is 0.
func checkPages(f *os.File, pageSize int) error {
	meta, err := newestMeta(f, pageSize)
	if err != nil {
		return err
	}
	w := pageWalk{f: f, pageSize: pageSize, hwm: binary.NativeEndian.Uint64(meta[40:]), seen: map[uint64]bool{}}
	return w.tree(binary.NativeEndian.Uint64(meta[16:]), 0)
}

const (
	pageHeaderSize  = 16
	pageElementSize = 16
	branchPageFlag  = 0x01
	leafPageFlag    = 0x02
	bucketLeafFlag  = 0x01
	maxTreeDepth    = 64
)

// newestMeta returns the meta (after the page header) with the higher
// transaction id; checkMetaPages has checked both.
func newestMeta(f *os.File, pageSize int) ([]byte, error) {
	var best []byte
	for i := range 2 {
		m := make([]byte, metaSumBytes)
		if _, err := f.ReadAt(m, int64(i*pageSize+metaOffset)); err != nil {
			return nil, fmt.Errorf("%w: reading meta page %d: %v", ErrCorrupt, i, err)
		}
		if best == nil || binary.NativeEndian.Uint64(m[48:]) > binary.NativeEndian.Uint64(best[48:]) {
			best = m
		}
	}
	return best, nil
}

type pageWalk struct {
	f        *os.File
	pageSize int
	hwm      uint64
	seen     map[uint64]bool
}

// tree checks the page id and the pages below it.
func (w *pageWalk) tree(id uint64, depth int) error {
	if depth > maxTreeDepth {
		return fmt.Errorf("%w: page tree deeper than %d", ErrCorrupt, maxTreeDepth)
	}
	if id < 2 || id >= w.hwm || w.seen[id] {
		return fmt.Errorf("%w: page reference %d (high-water mark %d, seen before: %t)", ErrCorrupt, id, w.hwm, w.seen[id])
	}
	head := make([]byte, pageHeaderSize)
	if _, err := w.f.ReadAt(head, int64(id)*int64(w.pageSize)); err != nil {
		return fmt.Errorf("%w: reading page %d: %v", ErrCorrupt, id, err)
	}
	overflow := uint64(binary.NativeEndian.Uint32(head[12:]))
	if binary.NativeEndian.Uint64(head) != id || id+overflow >= w.hwm {
		return fmt.Errorf("%w: page %d has id %d and %d overflow pages", ErrCorrupt, id, binary.NativeEndian.Uint64(head), overflow)
	}
	for i := range overflow + 1 {
		w.seen[id+i] = true
	}
	p := make([]byte, (overflow+1)*uint64(w.pageSize))
	if _, err := w.f.ReadAt(p, int64(id)*int64(w.pageSize)); err != nil {
		return fmt.Errorf("%w: reading page %d: %v", ErrCorrupt, id, err)
	}
	return w.page(p, id, depth)
}

// page checks the elements of page p (a file page or an inline bucket
// page) and the pages they refer to.
func (w *pageWalk) page(p []byte, id uint64, depth int) error {
	if len(p) < pageHeaderSize {
		return fmt.Errorf("%w: page %d is %d bytes", ErrCorrupt, id, len(p))
	}
	flags, count := binary.NativeEndian.Uint16(p[8:]), int(binary.NativeEndian.Uint16(p[10:]))
	if flags != branchPageFlag && flags != leafPageFlag {
		return fmt.Errorf("%w: page %d has flags %#x, not a branch or leaf page", ErrCorrupt, id, flags)
	}
	if pageHeaderSize+count*pageElementSize > len(p) {
		return fmt.Errorf("%w: page %d claims %d elements", ErrCorrupt, id, count)
	}
	for i := range count {
		at := pageHeaderSize + i*pageElementSize
		e := p[at : at+pageElementSize]
		if flags == branchPageFlag {
			pos, ksize := uint64(binary.NativeEndian.Uint32(e)), uint64(binary.NativeEndian.Uint32(e[4:]))
			if uint64(at)+pos+ksize > uint64(len(p)) {
				return fmt.Errorf("%w: element %d of branch page %d lies outside it", ErrCorrupt, i, id)
			}
			if err := w.tree(binary.NativeEndian.Uint64(e[8:]), depth+1); err != nil {
				return err
			}
			continue
		}
		eflags := binary.NativeEndian.Uint32(e)
		pos, ksize, vsize := uint64(binary.NativeEndian.Uint32(e[4:])), uint64(binary.NativeEndian.Uint32(e[8:])), uint64(binary.NativeEndian.Uint32(e[12:]))
		end := uint64(at) + pos + ksize + vsize
		if end > uint64(len(p)) {
			return fmt.Errorf("%w: element %d of leaf page %d lies outside it", ErrCorrupt, i, id)
		}
		if eflags&bucketLeafFlag == 0 {
			continue
		}
		v := p[end-vsize : end]
		if len(v) < 16 {
			return fmt.Errorf("%w: bucket value of %d bytes in page %d", ErrCorrupt, len(v), id)
		}
		if root := binary.NativeEndian.Uint64(v); root != 0 {
			if err := w.tree(root, depth+1); err != nil {
				return err
			}
		} else if err := w.page(v[16:], id, depth+1); err != nil {
			return err
		}
	}
	return nil
}
