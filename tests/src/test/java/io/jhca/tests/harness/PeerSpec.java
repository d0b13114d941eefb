package io.jhca.tests.harness;

import io.jhca.verbs.Access;
import io.jhca.verbs.CompletionChannel;
import io.jhca.verbs.QpType;

/** What a {@link Peer} is made of: QP type, buffer size, MR access, CQ depth, QP capabilities. Defaults suit most tests. */
public final class PeerSpec {
    QpType type = QpType.RC;
    long bufferBytes = 1 << 20;
    int mrAccess = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    int cqDepth = 256;
    int maxSendWr = 64;
    int maxRecvWr = 64;
    int maxSendSge = 4;
    int maxRecvSge = 4;
    int maxInlineData;
    boolean sqSigAll;
    boolean separateCqs = true;
    CompletionChannel channel;
    io.jhca.verbs.ProtectionDomain pd;
    io.jhca.verbs.SharedReceiveQueue srq;

    public static PeerSpec rc() {
        return new PeerSpec();
    }

    public static PeerSpec ud() {
        return new PeerSpec().type(QpType.UD);
    }

    public PeerSpec type(QpType t) {
        type = t;
        return this;
    }

    public PeerSpec bufferBytes(long n) {
        bufferBytes = n;
        return this;
    }

    /** {@link Access} mask of the peer's MR. */
    public PeerSpec mrAccess(int mask) {
        mrAccess = mask;
        return this;
    }

    public PeerSpec cqDepth(int n) {
        cqDepth = n;
        return this;
    }

    public PeerSpec maxSendWr(int n) {
        maxSendWr = n;
        return this;
    }

    public PeerSpec maxRecvWr(int n) {
        maxRecvWr = n;
        return this;
    }

    public PeerSpec maxSendSge(int n) {
        maxSendSge = n;
        return this;
    }

    public PeerSpec maxRecvSge(int n) {
        maxRecvSge = n;
        return this;
    }

    public PeerSpec maxInlineData(int n) {
        maxInlineData = n;
        return this;
    }

    public PeerSpec sqSigAll(boolean all) {
        sqSigAll = all;
        return this;
    }

    /** The peer's CQs report completion events to {@code ch} (made earlier, so it closes after them). */
    public PeerSpec channel(CompletionChannel ch) {
        channel = ch;
        return this;
    }

    /** One CQ for sends and receives instead of two. */
    public PeerSpec sharedCq() {
        separateCqs = false;
        return this;
    }

    /** The peer's QP and MR go into this PD (null: a PD of its own), e.g. several QPs of one SRQ. */
    public PeerSpec pd(io.jhca.verbs.ProtectionDomain pd) {
        this.pd = pd;
        return this;
    }

    /** The peer's QP takes its receives from this SRQ (null: a receive queue of its own). */
    public PeerSpec srq(io.jhca.verbs.SharedReceiveQueue srq) {
        this.srq = srq;
        return this;
    }
}
