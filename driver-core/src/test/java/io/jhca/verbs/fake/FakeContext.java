package io.jhca.verbs.fake;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.LinkLayer;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.PortAttributes;
import io.jhca.verbs.PortState;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpCapabilities;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.SrqInitAttributes;
import io.jhca.verbs.WorkCompletion;

import java.net.InetAddress;

/** The fake device: small limits so tests can reach them. */
final class FakeContext extends Context {
    static final DeviceAttributes ATTRS = new DeviceAttributes("1.0", 0x0002c90300a0b0c0L, 0x0002c90300a0b0c0L,
            1L << 32, 4096, 0x02c9, 4119, 0, "FAKE", 64, 128, 0, 4, 4, 64, 1024, 64, 16, 4, 4, 64, 1, 16, 1, 15, 1, 64,
            0, 16, 64, 4, 0, 0, 0);   // no windows, no multicast; SRQs of up to 64 WRs of 4 SGEs

    private int nextKey = 0x100;
    private int nextCqn = 1;
    private int nextQpn = 0x11;
    private int nextSrqn = 1;
    /** Runs once inside the provider's next QP or CQ creation: another thread's work at that moment, made certain. */
    Runnable beforeNextCreate;

    FakeContext(DeviceInfo device) {
        super(device);
    }

    @Override
    public DeviceAttributes queryDevice() {
        return ATTRS;
    }

    @Override
    protected PortAttributes driverQueryPort(int port) {
        return new PortAttributes(PortState.ACTIVE, Mtu.MTU_4096, Mtu.MTU_1024, 2, 0, 1L << 31, 0, 0, 0, 1, 1, 5,
                LinkLayer.ETHERNET);
    }

    @Override
    protected Gid driverQueryGid(int port, int index) {
        return index == 1 ? Gid.of(InetAddress.getLoopbackAddress()) : Gid.ZERO;
    }

    @Override
    protected ProtectionDomain driverAllocPd() {
        return new ProtectionDomain(this) {
            @Override
            protected MemoryRegion driverRegister(DmaRegion region, long offset, long length, int accessMask) {
                int key = nextKey++;
                return new MemoryRegion(this, region, offset, length, accessMask, key, key) {
                    @Override
                    protected void deregister() {
                    }
                };
            }

            @Override
            protected QueuePair driverCreateQp(QpInitAttributes init, QpCapabilities requested) {
                runHook();
                return new FakeQp(this, init, requested, nextQpn++);
            }

            @Override
            protected AddressHandle driverCreateAh(AhAttributes attributes) {
                return new AddressHandle(this, attributes) {
                    @Override
                    protected void destroy() {
                    }
                };
            }

            @Override
            protected SharedReceiveQueue driverCreateSrq(SrqInitAttributes init) {
                return new FakeSrq(this, init, nextSrqn++);
            }

            @Override
            protected void destroy() {
            }
        };
    }

    @Override
    protected CompletionQueue driverCreateCq(int cqe) {
        runHook();
        return new CompletionQueue(this, nextCqn++, cqe) {
            @Override
            protected int driverPoll(WorkCompletion wc) {
                return 0;
            }

            @Override
            protected void destroy() {
            }
        };
    }

    @Override
    protected void destroy() {
    }

    private void runHook() {
        Runnable r = beforeNextCreate;
        beforeNextCreate = null;
        if (r != null) {
            r.run();
        }
    }
}
