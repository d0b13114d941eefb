package io.jhca.memory;

/**
 * Linux ABI numbers used by this module, in one place. Values are the Linux ones (x86-64 and the
 * asm-generic architectures such as arm64 agree on all of them); each says which header it comes from.
 */
final class LinuxConstants {

    private LinuxConstants() {
    }

    // asm-generic/mman-common.h
    static final int PROT_READ = 0x1;
    static final int PROT_WRITE = 0x2;
    /** Place the mapping exactly at the address, replacing whatever was mapped there. */
    static final int MAP_FIXED = 0x10;
    static final int MAP_ANONYMOUS = 0x20;
    /** Fault the whole mapping in at mmap time. */
    static final int MAP_POPULATE = 0x8000;
    static final int MAP_HUGETLB = 0x40000;
    /** Child processes do not inherit the range (what rdma-core's ibv_dontfork_range asks for). */
    static final int MADV_DONTFORK = 10;

    // linux/mman.h
    static final int MAP_SHARED = 0x01;
    static final int MAP_PRIVATE = 0x02;

    // asm-generic/mman.h: no swap reserved for the pages (a placeholder range that is rarely touched)
    static final int MAP_NORESERVE = 0x4000;

    // asm-generic/hugetlb_encode.h: the page size is log2(size) in bits 31:26 of the mmap flags
    static final int MAP_HUGE_SHIFT = 26;
    static final int MAP_HUGE_2MB = 21 << MAP_HUGE_SHIFT;

    /** mmap's return value on failure, (void *) -1 (sys/mman.h). */
    static final long MAP_FAILED = -1L;

    // asm-generic/fcntl.h (octal there)
    static final int O_RDWR = 02;
    static final int O_CREAT = 0100;
    static final int O_EXCL = 0200;
    static final int O_CLOEXEC = 02000000;

    // asm-generic/errno-base.h
    static final int EPERM = 1;
    static final int EAGAIN = 11;
    static final int ENOMEM = 12;
    static final int EINVAL = 22;

    // linux/capability.h: CAP_SYS_ADMIN is capability number 21 (bit 21 of CapEff in /proc/<pid>/status)
    static final int CAP_SYS_ADMIN = 21;

    /** The huge page size this module asks for with {@link #MAP_HUGE_2MB}. */
    static final long HUGE_PAGE_2MB = 2L << 20;

    /** Symbolic name of the errno values this module reports, or "errno N". */
    static String errnoName(final int errno) {
        switch (errno) {
            case EPERM: return "EPERM";
            case EAGAIN: return "EAGAIN";
            case ENOMEM: return "ENOMEM";
            case EINVAL: return "EINVAL";
            default: return "errno " + errno;
        }
    }
}
