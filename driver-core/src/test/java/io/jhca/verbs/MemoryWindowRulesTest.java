package io.jhca.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaRegion;

/**
 * The shared memory window rules on the fake provider (which offers no windows): libibverbs values, the key byte
 * arithmetic, device capabilities, and what MwRules finds in a bind or an invalidation.
 */
class MemoryWindowRulesTest extends VerbsTestSupport {

    @Test
    void opcodesAndTypesHaveTheLibibverbsValues() {
        assertEquals(7, WrOpcode.LOCAL_INV.value());      // IBV_WR_LOCAL_INV
        assertEquals(8, WrOpcode.BIND_MW.value());        // IBV_WR_BIND_MW
        assertEquals(9, WrOpcode.SEND_WITH_INV.value());  // IBV_WR_SEND_WITH_INV
        assertEquals(WrOpcode.BIND_MW, WrOpcode.of(8));
        assertEquals(WcOpcode.BIND_MW, WrOpcode.BIND_MW.completionOpcode());
        assertEquals(WcOpcode.LOCAL_INV, WrOpcode.LOCAL_INV.completionOpcode());
        assertEquals(WcOpcode.SEND, WrOpcode.SEND_WITH_INV.completionOpcode());
        assertTrue(WrOpcode.BIND_MW.isLocal() && WrOpcode.LOCAL_INV.isLocal());
        assertFalse(WrOpcode.SEND_WITH_INV.isLocal() || WrOpcode.SEND_WITH_INV.isRdma());
        assertEquals(1, MwType.TYPE_1.value());
        assertEquals(2, MwType.TYPE_2.value());
    }

    @Test
    void incRkeyChangesOnlyTheKeyByteAndWraps() {
        assertEquals(0x12345601, MemoryWindow.incRkey(0x12345600));
        assertEquals(0x12345600, MemoryWindow.incRkey(0x123456ff));
        assertEquals(0xffffff00, MemoryWindow.incRkey(0xffffffff));
    }

    @Test
    void aDeviceWithoutWindowsRefusesThemAndTheirWorkRequests() {
        DeviceAttributes a = ctx.queryDevice();
        assertEquals(0, a.maxMw());
        assertFalse(a.supports(MwType.TYPE_1) || a.supports(MwType.TYPE_2));
        ProtectionDomain pd = track(ctx.allocatePd());
        refused(VerbsException.EOPNOTSUPP, "does not offer TYPE_1", () -> pd.allocMw(MwType.TYPE_1));
        refused(VerbsException.EOPNOTSUPP, "does not offer TYPE_2", () -> pd.allocMw(MwType.TYPE_2));
        CompletionQueue cq = track(ctx.createCq(16));
        QueuePair qp = track(pd.createQp(QpInitAttributes.rc(cq, cq)));
        qp.modify(QpAttributes.toInit(1));
        qp.modify(QpAttributes.toRtr(0x12, 0, AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1), Mtu.MTU_1024));
        qp.modify(QpAttributes.toRts(0));
        refused(VerbsException.EOPNOTSUPP, "no type 2 memory windows",
                () -> qp.postSend(new SendWr(0).opcode(WrOpcode.LOCAL_INV).invalidateRkey(0x100)));
        refused(VerbsException.EINVAL, "no memory window",
                () -> qp.postSend(new SendWr(0).opcode(WrOpcode.BIND_MW).bindMw(null, 0, new MwBind())));
        refused(VerbsException.EINVAL, "no type 2 memory windows", () -> qp.sendQueue().start().localInv(0x100));
        DeviceAttributes with = new DeviceAttributes("1", 1, 1, 1, 4096, 0, 0, 0, "", 1, 1,
                DeviceAttributes.CAP_MEM_WINDOW | DeviceAttributes.CAP_MEM_WINDOW_TYPE_2B, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
                1, 1, 0, 1, 0, 64, 0, 0, 0, 0, 0, 0);
        assertTrue(with.supports(MwType.TYPE_1) && with.supports(MwType.TYPE_2));
        assertEquals(64, with.maxMw());
    }

    @Test
    void bindErrorsFollowRxeOrder() {
        ProtectionDomain pd = track(ctx.allocatePd());
        ProtectionDomain other = track(ctx.allocatePd());
        DmaRegion mem = memory(65536);
        MemoryRegion bindable = track(pd.register(mem, 4096, 8192, Access.mask(Access.LOCAL_WRITE,
                Access.REMOTE_WRITE, Access.MW_BIND)));
        MemoryRegion readOnly = track(pd.register(mem, 0, 4096, Access.mask(Access.MW_BIND)));
        MemoryRegion plain = track(pd.register(mem, 0, 4096, Access.mask(Access.LOCAL_WRITE)));
        long start = bindable.address();
        int rw = Access.mask(Access.REMOTE_WRITE, Access.REMOTE_READ);
        // type 1: valid state, any span of the MR to its last byte
        assertNull(MwRules.bindError(MwType.TYPE_1, MwState.VALID, false, pd, pd, bindable, start, 8192, rw));
        assertNull(MwRules.bindError(MwType.TYPE_1, MwState.VALID, false, pd, pd, bindable, start + 8191, 1, rw));
        assertNull(MwRules.bindError(MwType.TYPE_1, MwState.VALID, false, pd, pd, null, 0, 0, 0), "unbind");
        assertTrue(MwRules.bindError(MwType.TYPE_1, MwState.VALID, false, pd, pd, bindable, start + 8191, 2, rw)
                .contains("C10-75"));
        assertTrue(MwRules.bindError(MwType.TYPE_1, MwState.VALID, false, pd, pd, bindable, start - 1, 1, rw)
                .contains("C10-75"));
        assertTrue(MwRules.bindError(MwType.TYPE_1, MwState.INVALID, false, pd, pd, bindable, start, 1, rw)
                .contains("valid state"));
        assertTrue(MwRules.bindError(MwType.TYPE_1, MwState.VALID, false, pd, pd, plain, plain.address(), 1, rw)
                .contains("C10-73"));
        assertTrue(MwRules.bindError(MwType.TYPE_1, MwState.VALID, false, pd, pd, readOnly, readOnly.address(), 1,
                Access.mask(Access.REMOTE_ATOMIC)).contains("C10-74"));
        assertNull(MwRules.bindError(MwType.TYPE_1, MwState.VALID, false, pd, pd, readOnly, readOnly.address(), 1,
                Access.mask(Access.REMOTE_READ)));
        // type 2: free, not bound to a QP, same PD as the QP, a span of non-zero length
        assertNull(MwRules.bindError(MwType.TYPE_2, MwState.FREE, false, pd, pd, bindable, start, 64, rw));
        assertTrue(MwRules.bindError(MwType.TYPE_2, MwState.VALID, true, pd, pd, bindable, start, 64, rw)
                .contains("free state"));
        assertTrue(MwRules.bindError(MwType.TYPE_2, MwState.FREE, false, pd, other, bindable, start, 64, rw)
                .contains("C10-72"));
        assertTrue(MwRules.bindError(MwType.TYPE_2, MwState.FREE, false, pd, pd, bindable, start, 0, rw)
                .contains("zero length"));
        // invalidation: type 2 and bound only
        assertNull(MwRules.invalidateError(MwType.TYPE_2, MwState.VALID));
        assertTrue(MwRules.invalidateError(MwType.TYPE_1, MwState.VALID).contains("type 1"));
        assertTrue(MwRules.invalidateError(MwType.TYPE_2, MwState.FREE).contains("not bound"));
        assertTrue(MwRules.invalidateError(MwType.TYPE_2, MwState.INVALID).contains("deallocated"));
        assertEquals(Access.mask(Access.REMOTE_READ), MwRules.remoteAccess(Access.mask(Access.LOCAL_WRITE,
                Access.REMOTE_READ, Access.MW_BIND)));
    }
}
