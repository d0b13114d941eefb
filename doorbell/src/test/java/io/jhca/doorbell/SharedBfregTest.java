package io.jhca.doorbell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.util.concurrent.atomic.AtomicInteger;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** A bfreg several send queues share: the doorbell under its lock, whose acquisition is the MMIO fence. */
class SharedBfregTest {

    private final UnsafeBuffer uarPage = TestMemory.page(4096);
    private final UnsafeBuffer host = TestMemory.page(4096);
    private final DoorbellRecord dbr = new DoorbellRecord().wrap(host, 0);
    private final DoorbellLock lock = new DoorbellLock();

    @Test
    void ringSharedWritesWhatRingWritesAndHoldsTheLockForTheStoreOnly() {
        RecordingMmioWindow window = new RecordingMmioWindow(uarPage);
        UarDoorbell bf = UarDoorbell.bfreg(window, 0, 0, 512);
        window.probe(() -> (lock.held() ? 0x10000 : 0) | dbr.sendCounter());

        bf.ringShared(dbr, 0x21234, 0x0012340aabcdef03L, lock);
        assertEquals("00001234", TestMemory.hex(host, 4, 4), "SND_DBR = be32(cur_post & 0xffff)");
        assertEquals("0012340aabcdef03", TestMemory.hex(uarPage, 0x800, 8));
        assertEquals(1, window.count(), "one store");
        assertEquals(8, window.width(0));
        assertEquals(0x11234, window.probed(0), "record written before the MMIO store, which runs under the lock");
        assertFalse(lock.held(), "released after the doorbell");
        assertEquals(0x900, bf.currentOffset(), "halves switch as in ring()");

        bf.ringShared(dbr, 0x21235, 0x0012350aabcdef03L, lock);
        assertEquals(0x900, window.offset(1));
        assertEquals(0x800, bf.currentOffset());
    }

    @Test
    void blueFlameSharedCopiesUnderTheLock() {
        RecordingMmioWindow window = new RecordingMmioWindow(uarPage);
        UarDoorbell reg = UarDoorbell.bfreg(window, 0, 0, 512);
        BlueFlame bfl = new BlueFlame(reg);
        UnsafeBuffer sq = TestMemory.page(4096);
        for (int i = 0; i < 64; i++) {
            sq.putByte(0x40 + i, (byte) (i + 1));
        }
        AtomicInteger unlockedStores = new AtomicInteger();
        window.probe(() -> {
            if (!lock.held()) {
                unlockedStores.incrementAndGet();
            }
            return dbr.sendCounter();
        });
        bfl.ringShared(dbr, 7, sq, 0, 4096, 0x40, 4, lock);
        assertEquals(8, window.count(), "one 64-byte chunk as eight stores");
        assertEquals(0, unlockedStores.get(), "every chunk store under the lock");
        assertEquals(7, window.probed(0), "record before the copy");
        assertEquals(TestMemory.hex(sq, 0x40, 64), TestMemory.hex(uarPage, 0x800, 64));
        assertFalse(lock.held());
        assertThrows(IllegalArgumentException.class, () -> bfl.ringShared(dbr, 8, sq, 0, 4096, 0x40, 4, null));
    }

    @Test
    void aFailedStoreReleasesTheLock() {
        MmioWindow failing = new MmioWindow(uarPage) {
            @Override
            protected void store64(int offset, long deviceOrder) {
                throw new IllegalStateException("device gone");
            }

            @Override
            protected void storeDoorbell64(int offset, long deviceOrder) {
                throw new IllegalStateException("device gone");
            }
        };
        UarDoorbell bf = new UarDoorbell(failing, 0x800, 0);
        assertThrows(IllegalStateException.class, () -> bf.ringShared(dbr, 1, 0x1L, lock));
        assertFalse(lock.held(), "the next doorbell must not wait forever");
        new UarDoorbell(new MmioWindow(uarPage), 0x800, 0).ringShared(dbr, 2, 0x2L, lock);
        assertEquals(0x2L, new MmioWindow(uarPage).getLongBe(0x800));
    }

    @Test
    void threadsSharingABfregNeverOverlap() throws Exception {
        // Each doorbell is checked by a window that counts concurrent stores; the JIT compiles the path in the
        // default run, the -Xint run interprets it.
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        MmioWindow window = new MmioWindow(uarPage) {
            @Override
            protected void store64(int offset, long deviceOrder) {
                if (inside.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                super.store64(offset, deviceOrder);
                Thread.onSpinWait();
                inside.decrementAndGet();
            }

            @Override
            protected void storeDoorbell64(int offset, long deviceOrder) {
                if (inside.incrementAndGet() != 1) {
                    overlaps.incrementAndGet();
                }
                super.storeDoorbell64(offset, deviceOrder);
                Thread.onSpinWait();
                inside.decrementAndGet();
            }
        };
        UarDoorbell bf = UarDoorbell.bfreg(window, 0, 0, 512);
        int perThread = 20_000;
        Thread[] threads = new Thread[3];
        for (int t = 0; t < threads.length; t++) {
            UnsafeBuffer own = TestMemory.page(4096);
            DoorbellRecord record = new DoorbellRecord().wrap(own, 0);
            long tag = (long) (t + 1) << 48;
            threads[t] = new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    bf.ringShared(record, i, tag | i, lock);
                }
            });
        }
        for (Thread t : threads) {
            t.start();
        }
        for (Thread t : threads) {
            t.join();
        }
        assertEquals(0, overlaps.get(), "doorbell stores overlapped");
        assertFalse(lock.held());
        int total = threads.length * perThread;
        // halves switch once per doorbell, under the lock: an even total lands back on the first half
        assertEquals(total % 2 == 0 ? 0x800 : 0x900, bf.currentOffset());
        assertTrue(uarPage.getLong(0x800, ByteOrder.BIG_ENDIAN) != 0);
    }
}
