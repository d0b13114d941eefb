package io.jhca.cm;

/**
 * Connection parameters ({@code struct rdma_conn_param}) and the CM timing this side asks for. Defaults: one
 * outstanding RDMA READ/atomic each way, 7 transport and RNR retries (rping's), rdma_cm's CM response timeout
 * (code 20, about 4.3 s; Linux cma.c CMA_CM_RESPONSE_TIMEOUT) and 15 CM retries (CMA_MAX_CM_RETRIES).
 */
public final class ConnParam {
    private byte[] privateData = new byte[0];
    private int responderResources = 1;
    private int initiatorDepth = 1;
    private int retryCount = 7;
    private int rnrRetryCount = 7;
    private int cmResponseTimeout = 20;
    private int maxCmRetries = 15;
    private int localAckTimeout = 14;

    public static ConnParam defaults() {
        return new ConnParam();
    }

    public ConnParam privateData(byte[] pd) {
        this.privateData = pd.clone();
        return this;
    }

    public ConnParam responderResources(int n) {
        this.responderResources = range("responder_resources", n, 0, 255);
        return this;
    }

    public ConnParam initiatorDepth(int n) {
        this.initiatorDepth = range("initiator_depth", n, 0, 255);
        return this;
    }

    public ConnParam retryCount(int n) {
        this.retryCount = range("retry_count", n, 0, 7);
        return this;
    }

    public ConnParam rnrRetryCount(int n) {
        this.rnrRetryCount = range("rnr_retry_count", n, 0, 7);
        return this;
    }

    /** CM response timeout code (4.096 us * 2^code): how long the peer may take to answer a REQ or DREQ. */
    public ConnParam cmResponseTimeout(int code) {
        this.cmResponseTimeout = range("CM response timeout", code, 0, 31);
        return this;
    }

    public ConnParam maxCmRetries(int n) {
        this.maxCmRetries = range("max CM retries", n, 0, 15);
        return this;
    }

    /** The QPs' local ACK timeout code (also the time wait after a disconnect). */
    public ConnParam localAckTimeout(int code) {
        this.localAckTimeout = range("local ACK timeout", code, 0, 31);
        return this;
    }

    private static int range(String what, int v, int lo, int hi) {
        if (v < lo || v > hi) {
            throw new IllegalArgumentException(what + " " + v + " is outside " + lo + ".." + hi);
        }
        return v;
    }

    public byte[] privateData() {
        return privateData.clone();
    }

    public int responderResources() {
        return responderResources;
    }

    public int initiatorDepth() {
        return initiatorDepth;
    }

    public int retryCount() {
        return retryCount;
    }

    public int rnrRetryCount() {
        return rnrRetryCount;
    }

    public int cmResponseTimeout() {
        return cmResponseTimeout;
    }

    public int maxCmRetries() {
        return maxCmRetries;
    }

    public int localAckTimeout() {
        return localAckTimeout;
    }
}
