package io.jhca.cm.endpoint;

import io.jhca.cm.ConnParam;

/** Sizes and timing of {@link RdmaEndpoint}s: message size, receive depth, RDMA data buffer, timeouts. */
public record EndpointConfig(int messageSize, int recvDepth, int dataSize, long timeoutMillis, ConnParam connParam) {

    public EndpointConfig {
        if (messageSize < 1 || recvDepth < 1 || dataSize < 1 || timeoutMillis < 1) {
            throw new IllegalArgumentException("endpoint sizes and timeout must be positive: " + messageSize + ", "
                    + recvDepth + ", " + dataSize + ", " + timeoutMillis);
        }
    }

    /** 1 KiB messages, 16 receives, a 64 KiB RDMA buffer, 10 s, rdma_cm's default connection parameters. */
    public static EndpointConfig defaults() {
        return new EndpointConfig(1024, 16, 64 * 1024, 10_000, ConnParam.defaults());
    }
}
