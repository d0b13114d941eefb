package io.jhca.mlx5.cmd;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntConsumer;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.connectx.CmdQueueDevice;
import io.jhca.connectx.DeviceCommand;
import io.jhca.connectx.DeviceDma;
import io.jhca.doorbell.MmioWindow;

/**
 * A test stand-in for ConnectX firmware: a BAR0 whose doorbell writes wake a firmware thread, which serves the
 * command queue through {@link CmdQueueDevice} and answers a handful of commands. Only what the tests need; the
 * device model ({@code io.jhca.connectx.ConnectXModel}) serves its commands through the same {@link CmdQueueDevice}.
 */
final class FakeFirmware extends MmioWindow implements AutoCloseable {

    private static final boolean BIG_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;

    /** What the firmware saw of one executed command. */
    record Seen(int slot, int opcode, int opMod, int inLength, int outLength, byte[] input) {
    }

    private final BlockingQueue<Integer> doorbells = new LinkedBlockingQueue<>();
    private final CmdQueueDevice device;
    private final int logSize;
    private final int logStride;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean silent;
    private volatile IntConsumer beforeFetch = mask -> { };
    private volatile long delayMillis;
    private volatile int crashOpcode = -1;
    private final Map<Integer, int[]> failures = new ConcurrentHashMap<>();
    final List<Seen> seen = java.util.Collections.synchronizedList(new ArrayList<>());
    final List<Integer> doorbellValues = java.util.Collections.synchronizedList(new ArrayList<>());
    final AtomicInteger pd = new AtomicInteger(0x10);
    final AtomicInteger cqn = new AtomicInteger(0x80);
    final AtomicInteger qpn = new AtomicInteger(0x100);
    final List<Long> pagesGiven = java.util.Collections.synchronizedList(new ArrayList<>());

    FakeFirmware(DeviceDma dma, int logSize, int logStride) {
        super(new UnsafeBuffer(ByteBuffer.allocateDirect(InitSegment.SIZE)));
        this.device = new CmdQueueDevice(dma);
        this.logSize = logSize;
        this.logStride = logStride;
        // fw 16.35.2000, cmdif rev 5: big-endian registers
        putIntBe(InitSegment.FW_REV, (35 << 16) | 16);
        putIntBe(InitSegment.CMDIF_REV_FW_SUB, (5 << 16) | 2000);
        putIntBe(InitSegment.CMDQ_ADDR_L_SZ, (logSize << 4) | logStride);
        this.thread = new Thread(this::loop, "fake-firmware");
        this.thread.setDaemon(true);
        this.thread.start();
    }

    CmdQueueDevice device() {
        return device;
    }

    /** Ignore doorbells: commands never complete. */
    void silent(boolean on) {
        silent = on;
    }

    /** Runs on the firmware thread before the slots of a doorbell are fetched (to corrupt descriptors). */
    void beforeFetch(IntConsumer hook) {
        beforeFetch = hook;
    }

    /** Doorbells rung but not yet taken by the firmware thread. */
    int pendingDoorbells() {
        return doorbells.size();
    }

    /** Answer every command only after this delay. */
    void delay(long millis) {
        delayMillis = millis;
    }

    /** The handler throws for this opcode (a firmware bug). */
    void crashOn(int opcode) {
        crashOpcode = opcode;
    }

    /** Make every command with this opcode fail with status and syndrome. */
    void fail(int opcode, int status, int syndrome) {
        failures.put(opcode, new int[] {status, syndrome});
    }

    /** Sees every register store as it happens: the doorbell wakes the firmware thread instead of landing in memory. */
    @Override
    protected void store32(int offset, int deviceOrder) {
        int value = BIG_ENDIAN ? deviceOrder : Integer.reverseBytes(deviceOrder);
        if (offset == InitSegment.CMD_DBELL) {
            doorbellValues.add(value);
            if (!silent) {
                doorbells.add(value);
            }
            return;
        }
        if (offset == InitSegment.CMDQ_ADDR_L_SZ) {
            // the size fields of cmdq_addr_l_sz are read-only: the device's
            value = (value & ~0xff) | (logSize << 4) | logStride;
            deviceOrder = BIG_ENDIAN ? value : Integer.reverseBytes(value);
        }
        super.store32(offset, deviceOrder);
    }

    private void loop() {
        while (running) {
            Integer mask;
            try {
                mask = doorbells.poll(10, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                return;
            }
            if (mask == null) {
                continue;
            }
            if (!device.attached()) {
                long hi = Integer.toUnsignedLong(getIntBe(InitSegment.CMDQ_ADDR_H));
                long lo = Integer.toUnsignedLong(getIntBe(InitSegment.CMDQ_ADDR_L_SZ));
                device.attach((hi << 32) | (lo & ~0xfffL), logSize, logStride);
            }
            beforeFetch.accept(mask);
            device.onDoorbell(mask, this::execute);
        }
    }

    private void execute(DeviceCommand cmd) {
        DirectBuffer in = cmd.input();
        MutableDirectBuffer out = cmd.output();
        int op = cmd.opcode();
        byte[] copy = new byte[cmd.inLength()];
        in.getBytes(0, copy);
        seen.add(new Seen(cmd.slot(), op, cmd.opMod(), cmd.inLength(), cmd.outLength(), copy));
        if (delayMillis > 0) {
            try {
                Thread.sleep(delayMillis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (op == crashOpcode) {
            throw new IllegalStateException("model bug for " + CmdOpcode.name(op));
        }
        Layout inLayout = CmdLayouts.input(op);
        Layout outLayout = CmdLayouts.output(op);
        if (inLayout == null) {
            cmd.status(CmdStatus.BAD_OP_ERR, 0x0bad0bad);
            return;
        }
        if (cmd.inLength() < inLayout.sizeBytes()) {
            cmd.status(CmdStatus.BAD_INP_LEN_ERR, cmd.inLength());
            return;
        }
        if (cmd.outLength() < outLayout.sizeBytes()) {
            cmd.status(CmdStatus.BAD_OUTP_LEN_ERR, cmd.outLength());
            return;
        }
        int[] f = failures.get(op);
        if (f != null) {
            cmd.status(f[0], f[1]);
            return;
        }
        switch (op) {
            case CmdOpcode.QUERY_ISSI:
                outLayout.set(out, 0, "current_issi", 0);
                outLayout.set(out, 0, "supported_issi_dw0", 0x3);
                break;
            case CmdOpcode.QUERY_PAGES:
                outLayout.set(out, 0, "num_pages", cmd.opMod() == HcaLayouts.PAGES_BOOT ? 1000 : -5);
                break;
            case CmdOpcode.MANAGE_PAGES: {
                int n = (int) inLayout.get(in, 0, "input_num_entries");
                if (cmd.inLength() < inLayout.sizeBytes(n)) {
                    cmd.status(CmdStatus.BAD_INP_LEN_ERR, 1);
                    return;
                }
                Field pas = inLayout.flexibleArray();
                for (int i = 0; i < n; i++) {
                    pagesGiven.add(pas.getElement(in, 0, i));
                }
                break;
            }
            case CmdOpcode.QUERY_HCA_CAP: {
                Layout cap = HcaCap.CMD_HCA_CAP;
                int base = 0x10;
                cap.set(out, base, "log_max_qp", 18);
                cap.set(out, base, "log_max_qp_sz", 15);
                cap.set(out, base, "log_max_cq", 24);
                cap.set(out, base, "log_max_cq_sz", 22);
                cap.set(out, base, "log_bf_reg_size", 9);
                cap.set(out, base, "log_max_ra_req_qp", 4);
                cap.set(out, base, "port_type", HcaCap.PORT_TYPE_ETH);
                cap.set(out, base, "num_ports", 1);
                cap.set(out, base, "roce", 1);
                // the last byte of the 4 KiB capability union, to prove the 8th mailbox came back
                out.putByte(cmd.outLength() - 1, (byte) 0x5a);
                break;
            }
            case CmdOpcode.ALLOC_PD:
                outLayout.set(out, 0, "pd", pd.getAndIncrement());
                break;
            case CmdOpcode.CREATE_CQ:
                outLayout.set(out, 0, "cqn", cqn.getAndIncrement());
                break;
            case CmdOpcode.CREATE_QP:
                outLayout.set(out, 0, "qpn", qpn.getAndIncrement());
                break;
            default:
                break;
        }
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
