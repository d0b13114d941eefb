package io.jhca.connectx;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import jnr.ffi.Pointer;

import io.jhca.memory.LibC;

/**
 * A whole file mapped shared, read-write (mmap MAP_SHARED): what two processes, or a process and a VM, see alike.
 * Used for BAR0 in a shared-memory file (ivshmem's memdev) and for a file standing for a machine's RAM (QEMU's
 * {@code memory-backend-file,share=on}). One mapping of any size (a 2 GiB RAM file does not fit one
 * {@code MappedByteBuffer}; vfio-lab notes), unmapped by {@link #close()}.
 */
final class SharedMapping implements AutoCloseable {

    // sys/mman.h, fcntl.h (x86-64 Linux)
    private static final int PROT_READ = 0x1;
    private static final int PROT_WRITE = 0x2;
    private static final int MAP_SHARED = 0x01;
    /** linux/mman.h (Linux 4.17): map exactly there, or fail with EEXIST instead of replacing a mapping. */
    private static final int MAP_FIXED_NOREPLACE = 0x100000;
    private static final int O_RDWR = 02;
    private static final int O_CLOEXEC = 02000000;
    private static final long MAP_FAILED = -1L;

    private final Path file;
    private final long address;
    private final long length;
    private boolean closed;

    private SharedMapping(Path file, long address, long length) {
        this.file = file;
        this.address = address;
        this.length = length;
    }

    /** Maps the first {@code length} bytes of {@code file}, which must exist and be at least that long. */
    static SharedMapping map(Path file, long length) {
        return map(file, length, 0);
    }

    /**
     * As {@link #map(Path, long)}, at exactly {@code at} (page aligned) unless it is 0; a range already in use there is
     * an error naming it, never a replaced mapping.
     */
    static SharedMapping map(Path file, long length, long at) {
        if ((at & 4095) != 0) {
            throw new IllegalArgumentException(String.format("mapping address 0x%x is not page aligned", at));
        }
        long size;
        try {
            size = Files.size(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot map " + file + ": " + e.getMessage(), e);
        }
        if (length <= 0 || length > size) {
            throw new IllegalArgumentException(file + " has " + size + " bytes; " + length + " are needed");
        }
        int fd = LibC.INSTANCE.open(file.toString(), O_RDWR | O_CLOEXEC, 0);
        if (fd < 0) {
            throw new IllegalStateException("cannot open " + file + ": " + LibC.describe(LibC.errno()));
        }
        try {
            Pointer p = LibC.INSTANCE.mmap(at == 0 ? null : LibC.pointer(at), length, PROT_READ | PROT_WRITE,
                    MAP_SHARED | (at == 0 ? 0 : MAP_FIXED_NOREPLACE), fd, 0);
            if (p == null || p.address() == MAP_FAILED) {
                throw new IllegalStateException(String.format("mmap of %s (%d bytes)%s failed: %s", file, length,
                        at == 0 ? "" : String.format(" at 0x%x", at), LibC.describe(LibC.errno())));
            }
            if (at != 0 && p.address() != at) {
                // a kernel before 4.17 takes the flag as a hint
                LibC.INSTANCE.munmap(p, length);
                throw new IllegalStateException(String.format("mmap of %s landed at 0x%x, not at 0x%x", file,
                        p.address(), at));
            }
            return new SharedMapping(file, p.address(), length);
        } finally {
            LibC.INSTANCE.close(fd); // the mapping keeps the file's pages
        }
    }

    /** The whole file's length, mapped. */
    static SharedMapping map(Path file) {
        try {
            return map(file, Files.size(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot map " + file + ": " + e.getMessage(), e);
        }
    }

    long address() {
        return address;
    }

    long length() {
        return length;
    }

    Path file() {
        return file;
    }

    /** Unmaps; nothing may touch the memory afterwards (owners make sure no view outlives this). */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            LibC.INSTANCE.munmap(LibC.pointer(address), length);
        }
    }
}
