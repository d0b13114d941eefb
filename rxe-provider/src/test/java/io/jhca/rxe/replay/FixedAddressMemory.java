package io.jhca.rxe.replay;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaRegion;
import jnr.ffi.LibraryLoader;

/**
 * Anonymous memory mapped at a chosen virtual address, for replaying requests whose RETH names a virtual address
 * of the process that was captured (rxe's MRs are addressed by the registering process's VA, and the ICRC covers
 * the RETH, so the address cannot be rewritten). MAP_FIXED_NOREPLACE never replaces an existing mapping: if
 * the address is taken here, construction fails with a message saying so. Not pinned (no DMA reaches it).
 */
final class FixedAddressMemory implements DmaRegion {

    /** The few libc calls needed (linux mman.h). */
    public interface Mman {
        @jnr.ffi.annotations.SaveError
        jnr.ffi.Pointer mmap(jnr.ffi.Pointer addr, @jnr.ffi.types.size_t long length, int prot, int flags, int fd,
                @jnr.ffi.types.off_t long offset);

        int munmap(jnr.ffi.Pointer addr, @jnr.ffi.types.size_t long length);
    }

    private static final int PROT_READ = 0x1;
    private static final int PROT_WRITE = 0x2;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_ANONYMOUS = 0x20;
    /** linux/mman.h since 4.17: fail with EEXIST instead of replacing a mapping (older kernels: just a hint). */
    private static final int MAP_FIXED_NOREPLACE = 0x100000;
    private static final long PAGE = 4096;
    private static final int EEXIST = 17;
    private static final Mman LIBC = LibraryLoader.create(Mman.class).load("c");

    /** The address is mapped already in this process (address space layout is random: rare, not a failure). */
    static final class AddressTaken extends IllegalStateException {
        private static final long serialVersionUID = 1L;

        AddressTaken(final String message) {
            super(message);
        }
    }

    private final long address;
    private final long length;
    private int references;
    private boolean closed;

    FixedAddressMemory(final long address, final long length) {
        if (address % PAGE != 0 || length <= 0 || length % PAGE != 0) {
            throw new IllegalArgumentException("fixed mapping at 0x" + Long.toHexString(address) + " + " + length
                    + ": address and length must be whole 4 KiB pages");
        }
        final jnr.ffi.Runtime rt = jnr.ffi.Runtime.getRuntime(LIBC);
        final jnr.ffi.Pointer p = LIBC.mmap(jnr.ffi.Pointer.wrap(rt, address), length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS
                | MAP_FIXED_NOREPLACE, -1, 0);
        final long got = p == null ? 0 : p.address();
        if (got == -1 || got == 0) {
            final int errno = rt.getLastError();
            final String what = "cannot map 0x" + Long.toHexString(address) + " + " + length + ": errno " + errno;
            if (errno == EEXIST) {
                throw new AddressTaken(what + " (the address is in use in this JVM)");
            }
            throw new IllegalStateException(what);
        }
        if (got != address) {
            LIBC.munmap(p, length);
            throw new IllegalStateException("the kernel placed the mapping at 0x" + Long.toHexString(got)
                    + ", not at 0x" + Long.toHexString(address) + " (no MAP_FIXED_NOREPLACE before Linux 4.17?)");
        }
        this.address = address;
        this.length = length;
    }

    @Override
    public synchronized long address() {
        check();
        return address;
    }

    @Override
    public synchronized long length() {
        check();
        return length;
    }

    @Override
    public long pageSize() {
        return PAGE;
    }

    @Override
    public synchronized long iova(final long offset) {
        check();
        return address + offset;
    }

    @Override
    public synchronized UnsafeBuffer buffer() {
        check();
        return new UnsafeBuffer(address, (int) length);
    }

    @Override
    public synchronized UnsafeBuffer buffer(final long offset, final int len) {
        check();
        if (offset < 0 || len < 0 || offset + len > length) {
            throw new IndexOutOfBoundsException("[" + offset + ", +" + len + ") of a " + length + "-byte mapping");
        }
        return new UnsafeBuffer(address + offset, len);
    }

    @Override
    public DmaRegion slice(final long offset, final long len) {
        throw new UnsupportedOperationException("no slices of a fixed-address mapping");
    }

    @Override
    public synchronized boolean isClosed() {
        return closed;
    }

    @Override
    public synchronized void retain() {
        check();
        references++;
    }

    @Override
    public synchronized void release() {
        if (references == 0) {
            throw new IllegalStateException("release without retain");
        }
        references--;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        if (references != 0) {
            throw new IllegalStateException("mapping at 0x" + Long.toHexString(address) + " is still registered");
        }
        closed = true;
        LIBC.munmap(jnr.ffi.Pointer.wrap(jnr.ffi.Runtime.getRuntime(LIBC), address), length);
    }

    private void check() {
        if (closed) {
            throw new IllegalStateException("mapping at 0x" + Long.toHexString(address) + " is closed");
        }
    }
}
