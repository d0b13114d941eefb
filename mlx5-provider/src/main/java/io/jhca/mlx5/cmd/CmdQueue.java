package io.jhca.mlx5.cmd;

import java.lang.invoke.VarHandle;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The driver side of the ConnectX command interface: one 4 KiB page of command entries in DMA memory, mailbox chains
 * for long inputs and outputs, the command doorbell, and polling of the ownership bit.
 *
 * <p>Sequence of one command (mlx5_core cmd.c {@code cmd_work_handler}, rdma-core mlx5_vfio.c
 * {@code mlx5_vfio_post_cmd}): fill the entry (type 7, lengths, first 16 input bytes, mailbox pointers, token),
 * scatter the rest of the input into mailboxes, link zeroed output mailboxes, set status_own = 1 (device owns it),
 * sign the entry, make it all visible, store {@code 1 << slot} big-endian to the init segment's cmd_dbell, poll until
 * the device clears the ownership bit, read the delivery status (status_own bits 7:1), gather the output, check the
 * output status.
 *
 * <p>Slots as in mlx5_core: with 2^n > 1 entries the last one is reserved for MANAGE_PAGES (so page requests can be
 * served while other commands wait for pages), the others serve any command; each caller takes a free slot, so
 * several threads may run commands at once. Commands are polled, not completed by EQ events. Not for the data path:
 * this allocates only when a message needs more mailboxes than any before it, but it blocks.
 */
public final class CmdQueue implements AutoCloseable {

    /** Bytes of the queue page (mlx5_core and rdma-core allocate one 4 KiB adapter page). */
    public static final int PAGE_SIZE = 4096;
    /** device.h {@code MLX5_MAX_COMMANDS}. */
    public static final int MAX_COMMANDS = 32;
    /** Upper bound on one message, far above any real command (QUERY_HCA_CAP output: 4112 bytes). */
    public static final int MAX_MESSAGE = 1 << 24;

    private static final class Slot {
        final int index;
        final CmdQueueEntry entry = new CmdQueueEntry();
        final MailboxChain in;
        final MailboxChain out;
        boolean stuck;

        Slot(int index, DmaBlock page, int stride, CmdMemory memory) {
            this.index = index;
            this.entry.wrap(page.buffer(), index * stride);
            this.in = new MailboxChain(memory);
            this.out = new MailboxChain(memory);
        }
    }

    private final InitSegment iseg;
    private final CmdMemory memory;
    private final DmaBlock page;
    private final int logSize;
    private final int logStride;
    private final Slot[] slots;
    /** The thread waiting for each slot's command, woken early by a CMD event (null: nobody waits). */
    private final java.util.concurrent.atomic.AtomicReferenceArray<Thread> waiters;
    private final java.util.concurrent.atomic.AtomicLong completionEvents = new java.util.concurrent.atomic.AtomicLong();
    private final int regularCount;
    private final Slot pageSlot;
    private final Semaphore regularPermits;
    private final Semaphore pagePermit;
    private final long timeoutNanos;
    private final long healthStallNanos;
    private final boolean checksums;
    private volatile CmdTrace trace;
    /** Run after each command completes (the async EQ's consumer), or null. */
    private volatile Runnable afterCommand;
    private int freeRegular;
    private int token;
    private boolean closed;
    /** Why the device was declared dead, or null while it lives: from then on no command reaches it. */
    private volatile String deadReason;

    private CmdQueue(InitSegment iseg, CmdMemory memory, DmaBlock page, int logSize, int logStride,
                     CmdQueueOptions options) {
        this.iseg = iseg;
        this.memory = memory;
        this.page = page;
        this.logSize = logSize;
        this.logStride = logStride;
        int n = 1 << logSize;
        this.slots = new Slot[n];
        for (int i = 0; i < n; i++) {
            slots[i] = new Slot(i, page, 1 << logStride, memory);
        }
        this.waiters = new java.util.concurrent.atomic.AtomicReferenceArray<>(n);
        this.regularCount = n > 1 ? n - 1 : 1;
        this.pageSlot = n > 1 ? slots[n - 1] : null;
        this.regularPermits = new Semaphore(regularCount, true);
        this.pagePermit = new Semaphore(1, true);
        this.freeRegular = (int) ((1L << regularCount) - 1);
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(options.timeoutMillis());
        this.healthStallNanos = TimeUnit.MILLISECONDS.toNanos(options.healthStallMillis());
        this.checksums = options.checksums();
        this.trace = options.trace();
    }

    /** Opens the queue with default options. */
    public static CmdQueue open(InitSegment iseg, CmdMemory memory) {
        return open(iseg, memory, CmdQueueOptions.defaults());
    }

    /**
     * Checks the command interface revision, reads the queue geometry from the init segment, allocates the queue
     * page and programs its address (mlx5_core {@code mlx5_cmd_init}). The caller has waited for
     * {@link InitSegment#initializing()} to clear, and waits for it again afterwards as mlx5_core does.
     */
    public static CmdQueue open(InitSegment iseg, CmdMemory memory, CmdQueueOptions options) {
        int rev = iseg.cmdifRev();
        if (rev != InitSegment.CMDIF_REV) {
            throw new IllegalStateException("Driver cmdif rev(" + InitSegment.CMDIF_REV
                    + ") differs from firmware's(" + rev + ")");
        }
        int logSize = iseg.logCmdqSize();
        int logStride = iseg.logCmdqStride();
        if ((1 << logSize) > MAX_COMMANDS) {
            throw new IllegalStateException("firmware reports too many outstanding commands " + (1 << logSize));
        }
        if (logSize + logStride > 12) {
            throw new IllegalStateException("command queue size overflow: log_sz " + logSize + " + log_stride "
                    + logStride + " > 12");
        }
        if ((1 << logStride) < CmdQueueEntry.SIZE) {
            throw new IllegalStateException("command entry stride " + (1 << logStride) + " < 64 bytes");
        }
        DmaBlock page = memory.allocate(PAGE_SIZE, InitSegment.CMDQ_ALIGNMENT);
        iseg.cmdqAddress(page.iova());
        // the address must reach the device before any doorbell (rdma-core: udma_to_device_barrier)
        VarHandle.fullFence();
        return new CmdQueue(iseg, memory, page, logSize, logStride, options);
    }

    /** Number of entries (1 << log_cmdq_size). */
    public int slots() {
        return slots.length;
    }

    public int logStride() {
        return logStride;
    }

    public int logSize() {
        return logSize;
    }

    /** IOVA of the queue page, as programmed into the init segment. */
    public long queueIova() {
        return page.iova();
    }

    /** Slot reserved for MANAGE_PAGES, or -1 with a one-entry queue. */
    public int pageSlot() {
        return pageSlot == null ? -1 : pageSlot.index;
    }

    /** Turns tracing on (a sink) or off (null) at run time; affects the next command posted. */
    public void trace(CmdTrace sink) {
        this.trace = sink;
    }

    public CmdTrace trace() {
        return trace;
    }

    /** Runs a command whose input and output are described by two {@link Struct} views (lengths from the views). */
    public void execute(Struct in, Struct out) {
        execute(in.buffer(), in.base(), in.length(), out.buffer(), out.base(), out.length());
    }

    /** Runs a command held at offset 0 of {@code in}, output to offset 0 of {@code out}. */
    public void execute(DirectBuffer in, int inLength, MutableDirectBuffer out, int outLength) {
        execute(in, 0, inLength, out, 0, outLength);
    }

    /**
     * Runs one command and waits for it.
     *
     * @param in        input message: header (opcode, op_mod...) then the command's fields, {@code inLength} bytes
     * @param out       receives {@code outLength} bytes of output: status, syndrome, then the command's fields
     * @throws CommandException        the device refused the descriptor, or the firmware returned status != 0
     *                                 (the output is still copied to {@code out})
     * @throws CommandTimeoutException no answer within the timeout (the slot is then never reused)
     */
    public void execute(DirectBuffer in, int inOffset, int inLength,
                        MutableDirectBuffer out, int outOffset, int outLength) {
        checkRange("input", in.capacity(), inOffset, inLength);
        checkRange("output", out.capacity(), outOffset, outLength);
        int opcode = CmdHeader.opcode(in, inOffset);
        int opMod = CmdHeader.opMod(in, inOffset);
        if (deadReason != null) {
            answerDead(opcode, opMod, out, outOffset, outLength);
            return;
        }
        boolean pages = opcode == CmdOpcode.MANAGE_PAGES && pageSlot != null;
        Runnable pump = afterCommand;
        if (pump != null) {
            pump.run(); // the previous command's CMD EQE: the device may write it after the entry's ownership
        }
        Slot slot = acquire(pages, opcode, opMod);
        boolean release = true;
        try {
            run(slot, opcode, opMod, in, inOffset, inLength, out, outOffset, outLength);
        } catch (CommandTimeoutException | DeviceHealthException e) {
            release = false; // the device may still write the entry
            throw e;
        } finally {
            if (release) {
                release(slot, pages);
            }
        }
    }

    private static void checkRange(String what, int capacity, int offset, int length) {
        if (length < CmdHeader.MIN_LENGTH || length > MAX_MESSAGE) {
            throw new IllegalArgumentException(what + " length " + length + " not in [" + CmdHeader.MIN_LENGTH
                    + ", " + MAX_MESSAGE + "]");
        }
        if (offset < 0 || (long) offset + length > capacity) {
            throw new IndexOutOfBoundsException(what + " [" + offset + ", " + offset + "+" + length
                    + ") outside a buffer of " + capacity + " bytes");
        }
    }

    private void run(Slot slot, int opcode, int opMod, DirectBuffer in, int inOffset, int inLength,
                     MutableDirectBuffer out, int outOffset, int outLength) {
        CmdQueueEntry e = slot.entry;
        int tok = nextToken();
        e.clear();
        e.type(CmdQueueEntry.TYPE_PCIE).inLength(inLength).outLength(outLength).token(tok);
        e.putInlineInput(in, inOffset, inLength);
        slot.in.prepare(inLength, tok);
        slot.in.write(in, inOffset, inLength);
        e.inPointer(slot.in.firstIova());
        slot.out.prepare(outLength, tok);
        e.outPointer(slot.out.firstIova());
        if (checksums) {
            slot.in.sign();
            slot.out.sign();
        }
        e.statusOwn(CmdQueueEntry.OWNER_HW);
        e.sign();
        CmdTrace t = trace;
        if (t != null) {
            dump(t, slot.index, true, e, slot.in, inLength);
        }
        // the descriptor and mailboxes must be visible before the doorbell (mlx5_core: wmb(); iowrite32be)
        VarHandle.fullFence();
        waiters.set(slot.index, Thread.currentThread());
        iseg.ringCmdDoorbell(1 << slot.index);

        String unhealthy;
        try {
            unhealthy = awaitOwnership(e);
        } finally {
            waiters.set(slot.index, null);
        }
        Runnable pump = afterCommand;
        if (pump != null && unhealthy == null) {
            pump.run();
        }
        if (unhealthy != null) {
            slot.stuck = true;
            if (unhealthy.isEmpty()) {
                throw new CommandTimeoutException(opcode, opMod, slot.index, TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
            }
            declareDead(unhealthy);
            DeviceHealthException x = new DeviceHealthException(opcode, opMod, slot.index, unhealthy);
            if (t != null) {
                line(t, "cmd[" + slot.index + "]: " + x.getMessage());
            }
            throw x;
        }
        int delivery = e.deliveryStatus();
        if (delivery == 0 && checksums && !(e.signatureValid() && slot.out.signaturesValid())) {
            delivery = DeliveryStatus.SIGNAT_ERR.value();
        }
        e.getInlineOutput(out, outOffset, outLength);
        slot.out.read(out, outOffset, outLength);
        if (t != null) {
            dump(t, slot.index, false, e, slot.out, outLength);
        }
        if (delivery != 0) {
            CommandException x = CommandException.undelivered(opcode, opMod, delivery);
            if (t != null) {
                line(t, "cmd[" + slot.index + "]: " + x.getMessage());
            }
            throw x;
        }
        int status = CmdHeader.status(out, outOffset);
        if (status != 0) {
            int syndrome = CmdHeader.syndrome(out, outOffset);
            if (t != null) {
                line(t, CmdDump.failure(opcode, opMod, status, syndrome));
            }
            throw CommandException.failed(opcode, opMod, status, syndrome);
        }
    }

    /**
     * Declares the device dead (mlx5_core's MLX5_DEVICE_STATE_INTERNAL_ERROR): no later command reaches it; those that
     * only release something succeed with an all-zero output, the others fail ({@link DeadDeviceAnswers}). The first
     * reason stays. Also done by the queue itself when a waiting command finds the health registers bad.
     */
    public void declareDead(String reason) {
        synchronized (this) {
            if (deadReason == null) {
                deadReason = reason;
            }
        }
    }

    /** Why the device was declared dead, or null while it is alive. */
    public String deadReason() {
        return deadReason;
    }

    private void answerDead(int opcode, int opMod, MutableDirectBuffer out, int outOffset, int outLength) {
        CmdTrace t = trace;
        if (!DeadDeviceAnswers.succeeds(opcode)) {
            DeviceDeadException x = new DeviceDeadException(opcode, opMod, deadReason);
            if (t != null) {
                line(t, "cmd: " + x.getMessage());
            }
            throw x;
        }
        out.setMemory(outOffset, outLength, (byte) 0);
        if (t != null) {
            line(t, "cmd: " + CmdOpcode.name(opcode) + String.format("(0x%x)", opcode)
                    + " answered by the driver: the device is dead");
        }
    }

    /**
     * Has {@code pump} run before every command is posted and after it completes, from the thread that runs it. With
     * CMD events enabled every command also adds an EQE, which the device may write just after it hands the entry
     * back; a burst of commands must not outrun the EQ's consumer (an EQ overrun is fatal on a real device), so each
     * command consumes what is pending (the previous command's event at the latest) instead of relying on the event
     * thread being scheduled in time. Null stops it.
     */
    public void afterEachCommand(Runnable pump) {
        this.afterCommand = pump;
    }

    /**
     * A CMD event from the EQ (rdma-core mlx5_vfio.c asks for them on its async EQ): wakes the threads waiting for the
     * slots in {@code slotVector}. Waiting threads also poll their entries, so an event that is late or lost costs
     * time, never a command.
     */
    public void completionEvent(int slotVector) {
        completionEvents.incrementAndGet();
        for (int i = 0; i < slots.length; i++) {
            if ((slotVector & (1 << i)) != 0) {
                Thread t = waiters.get(i);
                if (t != null) {
                    LockSupport.unpark(t);
                }
            }
        }
    }

    /** CMD events seen so far. */
    public long completionEvents() {
        return completionEvents.get();
    }

    /** A failing trace sink must not break the command protocol (e.g. leave a rung slot released): it is ignored. */
    private static void dump(CmdTrace t, int slot, boolean input, CmdQueueEntry e, MailboxChain chain, int length) {
        try {
            CmdDump.dump(t, slot, input, e, chain, length);
        } catch (RuntimeException ignored) {
            // tracing is best effort
        }
    }

    private static void line(CmdTrace t, String text) {
        try {
            t.line(text);
        } catch (RuntimeException ignored) {
            // tracing is best effort
        }
    }

    /**
     * Polls status_own bit 0: spin briefly, then park with a growing back-off up to 1 ms, reading the health registers
     * between parks as mlx5_core's health poller does, so that a dead or stuck device is an error now rather than
     * after the whole timeout.
     *
     * @return null once the device handed the entry back; "" on timeout; else why the device is unhealthy
     */
    private String awaitOwnership(CmdQueueEntry e) {
        long start = System.nanoTime();
        long deadline = start + timeoutNanos;
        int spins = 0;
        long park = 1_000;
        DeviceHealth health = new DeviceHealth(iseg, TimeUnit.NANOSECONDS.toMillis(healthStallNanos), start);
        while (e.ownedByDevice()) {
            if (spins < 1_000) {
                spins++;
                Thread.onSpinWait();
                continue;
            }
            long now = System.nanoTime();
            if (now - deadline >= 0) {
                return "";
            }
            String sick = health.check(now);
            if (sick != null) {
                return sick;
            }
            LockSupport.parkNanos(park);
            park = Math.min(park * 2, 1_000_000);
        }
        return null;
    }

    private synchronized int nextToken() {
        // mlx5_core alloc_token: 8-bit, never 0
        token = (token + 1) & 0xff;
        if (token == 0) {
            token = 1;
        }
        return token;
    }

    private Slot acquire(boolean pages, int opcode, int opMod) {
        Semaphore permits = pages ? pagePermit : regularPermits;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("command queue is closed");
            }
        }
        try {
            if (!permits.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS)) {
                throw new CommandTimeoutException(opcode, opMod, -1, TimeUnit.NANOSECONDS.toMillis(timeoutNanos));
            }
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(CmdOpcode.name(opcode) + ": interrupted waiting for a command slot", ie);
        }
        synchronized (this) {
            if (closed) {
                permits.release();
                throw new IllegalStateException("command queue is closed");
            }
            if (pages) {
                return pageSlot;
            }
            int i = Integer.numberOfTrailingZeros(freeRegular);
            freeRegular &= ~(1 << i);
            return slots[i];
        }
    }

    private void release(Slot slot, boolean pages) {
        if (pages) {
            pagePermit.release();
            return;
        }
        synchronized (this) {
            freeRegular |= 1 << slot.index;
        }
        regularPermits.release();
    }

    /**
     * Stops accepting commands and returns the DMA memory, unless a slot timed out: then the device may still write
     * to it and the memory is deliberately leaked (reset the device first).
     *
     * @throws IllegalStateException if commands are still running
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            int stuck = 0;
            for (Slot s : slots) {
                stuck += s.stuck ? 1 : 0;
            }
            int needRegular = regularCount - stuckRegular();
            int needPage = pageSlot != null && !pageSlot.stuck ? 1 : 0;
            if (!regularPermits.tryAcquire(needRegular)) {
                throw new IllegalStateException("commands still running");
            }
            if (!pagePermit.tryAcquire(needPage)) {
                regularPermits.release(needRegular);
                throw new IllegalStateException("a MANAGE_PAGES command is still running");
            }
            closed = true;
            if (stuck == 0) {
                for (Slot s : slots) {
                    s.in.free();
                    s.out.free();
                }
                memory.free(page);
            }
        }
    }

    private int stuckRegular() {
        int n = 0;
        for (int i = 0; i < regularCount; i++) {
            n += slots[i].stuck ? 1 : 0;
        }
        return n;
    }
}
