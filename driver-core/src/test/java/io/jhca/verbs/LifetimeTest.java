package io.jhca.verbs;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.fake.FakeProviderAccess;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Parents refuse to close while children live; nothing is freed behind the user's back. */
class LifetimeTest extends VerbsTestSupport {

    @Test
    void pdWithMrAndQpRefusesToCloseAndNamesThem() {
        ProtectionDomain pd = ctx.allocatePd();
        DmaRegion mem = memory(8192);
        MemoryRegion mr = pd.register(mem, Access.LOCAL_WRITE);
        CompletionQueue cq = ctx.createCq(16);
        QueuePair qp = pd.createQp(QpInitAttributes.rc(cq, cq));

        VerbsException e = refused(VerbsException.EBUSY, "1 MR, 1 QP", pd::close);
        assertTrue(e.getMessage().startsWith("cannot close PD"), e.getMessage());
        refused(VerbsException.EBUSY, "1 QP", cq::close);
        refused(VerbsException.EBUSY, "1 PD, 1 CQ", ctx::close);

        qp.close();
        cq.close();
        mr.close();
        pd.close();
        assertTrue(pd.isClosed());
        assertTrue(mr.isClosed());
    }

    @Test
    void doubleCloseIsHarmlessAndUseAfterCloseIsRefused() {
        ProtectionDomain pd = ctx.allocatePd();
        pd.close();
        pd.close();
        refused(VerbsException.EINVAL, "PD is closed", () -> pd.register(memory(4096), Access.LOCAL_WRITE));
        CompletionQueue cq = ctx.createCq(4);
        cq.close();
        refused(VerbsException.EINVAL, "closed", () -> cq.poll(new WorkCompletion()));
    }

    @Test
    void registrationPinsTheRegionUntilDeregistered() {
        ProtectionDomain pd = track(ctx.allocatePd());
        DmaRegion mem = memory(4096);
        MemoryRegion mr = pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_READ);
        assertThrows(IllegalStateException.class, mem::close);
        assertFalse(mem.isClosed());
        mr.close();
        mem.close();
        assertTrue(mem.isClosed());
    }

    @Test
    void qpOnAClosedCqOrAnotherDevicesCqIsRefused() {
        ProtectionDomain pd = track(ctx.allocatePd());
        CompletionQueue cq = ctx.createCq(4);
        cq.close();
        refused(VerbsException.EINVAL, "closed", () -> pd.createQp(QpInitAttributes.rc(cq, cq)));
        try (Context other = Verbs.open("fake0")) {
            CompletionQueue foreign = other.createCq(4);
            refused(VerbsException.EINVAL, "another device", () -> pd.createQp(QpInitAttributes.rc(foreign, foreign)));
            foreign.close();
        }
    }

    @Test
    void addressHandleKeepsItsPdOpen() {
        ProtectionDomain pd = ctx.allocatePd();
        AddressHandle ah = pd.createAh(AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1));
        refused(VerbsException.EBUSY, "1 AH", pd::close);
        ah.close();
        pd.close();
        assertEquals(0, ctx.userCount());
    }

    @Test
    void aCqOnAnotherDevicesChannelIsRefused() {
        // a CQ's completion events go to a channel of its own device
        try (Context other = Verbs.open("fake0")) {
            CompletionChannel foreign = other.createCompletionChannel();
            int users = ctx.userCount();
            refused(VerbsException.EINVAL, "belongs to another device", () -> ctx.createCq(4, foreign));
            assertEquals(users, ctx.userCount(), "no CQ was created");
            assertEquals(0, foreign.userCount());
            foreign.close();
        }
    }

    @Test
    void anSrqClosedWhileItsQpIsBeingMadeLeavesNoUserBehind() {
        // another thread closes the SRQ after createQp checked it and before the QP exists (made certain here by
        // closing it inside the provider's call): the QP is refused, and its PD and CQ count no user that never came
        // to be, so they still close
        ProtectionDomain pd = ctx.allocatePd();
        CompletionQueue cq = ctx.createCq(16);
        SharedReceiveQueue srq = pd.createSrq(SrqInitAttributes.create());
        FakeProviderAccess.beforeNextCreate(ctx, srq::close);
        refused(VerbsException.EINVAL, "is closed", () -> pd.createQp(QpInitAttributes.rc(cq, cq).srq(srq)));
        assertTrue(srq.isClosed());
        assertEquals(0, pd.userCount(), "no QP left on the PD");
        assertEquals(0, cq.userCount(), "no QP left on the CQ");
        cq.close();
        pd.close();
        assertTrue(cq.isClosed() && pd.isClosed());
    }

    @Test
    void aChannelClosedWhileItsCqIsBeingMadeLeavesNoCq() {
        // the same race for a CQ and its completion channel: the CQ the provider made is closed again, so the device
        // does not count it and still closes
        CompletionChannel ch = ctx.createCompletionChannel();
        int users = ctx.userCount();
        FakeProviderAccess.beforeNextCreate(ctx, ch::close);
        refused(VerbsException.EINVAL, "is closed", () -> ctx.createCq(4, ch));
        assertTrue(ch.isClosed());
        assertEquals(users - 1, ctx.userCount(), "neither the channel nor a CQ counts on the device");
    }
}
