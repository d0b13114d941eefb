package io.jhca.doorbell;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.UnsafeApi;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A window over device registers: a mapped BAR (vfio) or UAR page, or off-heap memory standing in for one
 * (the device model). Every access is one aligned, big-endian access of its full width: a 64-bit
 * doorbell is one 8-byte store, never two 4-byte ones (the HCA would see a torn doorbell).
 *
 * <p>Byte order: device registers are big-endian. The value is byte-swapped in a register first and then
 * stored with one {@code putIntVolatile}/{@code putLongVolatile}, so the store itself is a single
 * {@code mov} (plus the trailing {@code lock addl} HotSpot adds after a volatile store on x86).
 *
 * <p>Offsets are bounds- and alignment-checked before any raw access: a bad offset is an exception, never
 * a stray store into someone else's memory or a JVM crash. Not thread-safe by itself; doorbell users are
 * single writers (a shared bfreg needs a lock around the whole doorbell sequence).
 *
 * <p>The {@code store*} hooks exist so tests can record the exact accesses; production code uses this class.
 */
public class MmioWindow {

    private static final boolean NATIVE_BIG_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;

    /** Bytes of one BlueFlame chunk: 8 stores of 8 bytes, one write-combining line (rdma-core mmio_memcpy_x64). */
    public static final int CHUNK = 64;

    /**
     * Whether an earlier store to ordinary memory may pass a later store to this window, so that a doorbell needs
     * real fences: a write-combining mapping (rdma-core maps BlueFlame pages WC), or any mapping on a CPU without
     * x86-64's store order.
     */
    private static final boolean TSO = System.getProperty("os.arch", "").matches("amd64|x86_64");

    private final UnsafeBuffer buffer;
    private final int length;
    private final boolean writeCombining;

    /**
     * A window over raw mapped memory, e.g. an mmap of a vfio BAR region.
     *
     * @param address virtual address of the first register byte, 8-byte aligned
     * @param length  bytes in the window
     */
    public MmioWindow(long address, int length) {
        this(new UnsafeBuffer(checkAddress(address, length), length));
    }

    /**
     * A window over off-heap memory already wrapped in a buffer (a UAR page of the device model, or a
     * {@code DmaRegion.buffer()}). The buffer must be off-heap and 8-byte aligned.
     */
    public MmioWindow(UnsafeBuffer memory) {
        this(memory, false);
    }

    /**
     * As {@link #MmioWindow(UnsafeBuffer)}, saying how the memory is mapped: {@code writeCombining} for a WC mapping,
     * false for an uncached one (what vfio-pci's mmap of a BAR gives: pgprot_noncached) or ordinary memory.
     */
    public MmioWindow(UnsafeBuffer memory, boolean writeCombining) {
        if (memory.byteArray() != null) {
            throw new IllegalArgumentException("an MMIO window needs off-heap memory, not a byte[]");
        }
        if ((memory.addressOffset() & 7) != 0) {
            throw new IllegalArgumentException("MMIO window address 0x" + Long.toHexString(memory.addressOffset())
                + " is not 8-byte aligned");
        }
        if (memory.capacity() <= 0) {
            throw new IllegalArgumentException("empty MMIO window");
        }
        this.buffer = memory;
        this.length = memory.capacity();
        this.writeCombining = writeCombining;
    }

    private static long checkAddress(long address, int length) {
        if (address == 0 || (address & 7) != 0) {
            throw new IllegalArgumentException("MMIO address 0x" + Long.toHexString(address) + " is null or not 8-byte aligned");
        }
        if (length <= 0) {
            throw new IllegalArgumentException("MMIO window length " + length);
        }
        return address;
    }

    /** Whether the window is a write-combining mapping (see {@link #putDoorbellBe}). */
    public final boolean writeCombining() {
        return writeCombining;
    }

    /** Bytes in the window. */
    public final int length() {
        return length;
    }

    /** Virtual address of the window's first byte. */
    public final long address() {
        return buffer.addressOffset();
    }

    /** One aligned 4-byte store of {@code value} in big-endian byte order at {@code offset}. */
    public final void putIntBe(int offset, int value) {
        check(offset, 4);
        store32(offset, NATIVE_BIG_ENDIAN ? value : Integer.reverseBytes(value));
    }

    /** One aligned 8-byte store of {@code value} in big-endian byte order at {@code offset}. */
    public final void putLongBe(int offset, long value) {
        check(offset, 8);
        store64(offset, NATIVE_BIG_ENDIAN ? value : Long.reverseBytes(value));
    }

    /**
     * A send doorbell: one aligned 8-byte store of {@code value} (big-endian), which the device must see after every
     * earlier store of this thread (the WQEs and the doorbell record, rdma-core {@code mmio_wc_start}) and promptly
     * ({@code mmio_flush_writes}).
     *
     * <p>On x86-64 to an uncached or write-back mapping this is a release store, a plain {@code mov}: stores leave
     * the store buffer in program order and uncached stores are neither combined nor held back (Intel SDM vol. 3A
     * §8.2.2, "writes to memory are not reordered with other writes", the exceptions being write-combining memory
     * and non-temporal stores; §11.3 UC "not reordered"). Linux's {@code writel()} on x86 is likewise a plain
     * {@code mov} ordered after earlier writes to DMA memory. A write-combining mapping, or another CPU, gets
     * {@link Fences#doorbellRecordBeforeMmio()} before and a volatile store (its trailing locked instruction is
     * {@link Fences#flushMmio()}) as rdma-core's two {@code sfence}s.
     */
    public final void putDoorbellBe(int offset, long value) {
        check(offset, 8);
        long deviceOrder = NATIVE_BIG_ENDIAN ? value : Long.reverseBytes(value);
        if (writeCombining || !TSO) {
            Fences.doorbellRecordBeforeMmio();
            store64(offset, deviceOrder);
        } else {
            storeDoorbell64(offset, deviceOrder);
        }
    }

    /** One aligned 4-byte load at {@code offset}, read as big-endian. */
    public final int getIntBe(int offset) {
        check(offset, 4);
        int raw = UnsafeApi.getIntVolatile(null, buffer.addressOffset() + offset);
        return NATIVE_BIG_ENDIAN ? raw : Integer.reverseBytes(raw);
    }

    /** One aligned 8-byte load at {@code offset}, read as big-endian. */
    public final long getLongBe(int offset) {
        check(offset, 8);
        long raw = UnsafeApi.getLongVolatile(null, buffer.addressOffset() + offset);
        return NATIVE_BIG_ENDIAN ? raw : Long.reverseBytes(raw);
    }

    /**
     * Copies one 64-byte chunk verbatim (bytes in memory order, which for a WQE is already big-endian) from
     * {@code src} to the 64-byte aligned {@code offset}, as eight 8-byte stores in ascending order.
     *
     * <p>These are release stores (a plain {@code mov} on x86, kept in program order by the JIT), not
     * volatile ones: a volatile store's trailing locked instruction would drain the write-combining buffer
     * after every 8 bytes and cut the chunk into eight bus writes. rdma-core's x86 {@code mmio_memcpy_x64}
     * (util/mmio.h) is likewise eight plain 64-bit stores; the fence comes once, after the copy.
     */
    public final void putChunk64(int offset, DirectBuffer src, int srcOffset) {
        check(offset, CHUNK);
        if (srcOffset < 0 || srcOffset > src.capacity() - CHUNK) {
            throw new IndexOutOfBoundsException("source chunk [" + srcOffset + ", +64) outside buffer of " + src.capacity());
        }
        for (int i = 0; i < CHUNK; i += 8) {
            storeChunkWord(offset + i, src.getLong(srcOffset + i));   // native order in, native order out: verbatim
        }
    }

    /** Stores 4 bytes already in device (big-endian) order; one volatile 4-byte store. */
    protected void store32(int offset, int deviceOrder) {
        UnsafeApi.putIntVolatile(null, buffer.addressOffset() + offset, deviceOrder);
    }

    /** Stores 8 bytes already in device (big-endian) order; one volatile 8-byte store. */
    protected void store64(int offset, long deviceOrder) {
        UnsafeApi.putLongVolatile(null, buffer.addressOffset() + offset, deviceOrder);
    }

    /** Stores a send doorbell already in device order on an uncached x86-64 mapping: one release (plain) store. */
    protected void storeDoorbell64(int offset, long deviceOrder) {
        UnsafeApi.putLongRelease(null, buffer.addressOffset() + offset, deviceOrder);
    }

    /** Stores 8 bytes of a BlueFlame chunk verbatim; one release (plain, ordered) 8-byte store. */
    protected void storeChunkWord(int offset, long verbatim) {
        UnsafeApi.putLongRelease(null, buffer.addressOffset() + offset, verbatim);
    }

    /**
     * The one check before a raw access: within the window's memory as it is now (a window over a DMA region's view
     * shrinks to nothing when the region closes) and aligned to the access's width (the window's start is 8-byte
     * aligned).
     */
    private void check(int offset, int width) {
        int capacity = buffer.capacity();
        if (offset < 0 || offset > capacity - width) {
            throw new IndexOutOfBoundsException("MMIO access [0x" + Integer.toHexString(offset) + ", +" + width
                + ") outside window of 0x" + Integer.toHexString(capacity) + " bytes"
                + (capacity < length ? " (its memory was closed)" : ""));
        }
        if ((offset & (width - 1)) != 0) {
            throw new IllegalArgumentException("MMIO access of " + width + " bytes at offset 0x"
                + Integer.toHexString(offset) + " is not " + width + "-byte aligned");
        }
    }
}
