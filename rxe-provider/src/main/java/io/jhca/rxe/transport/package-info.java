/**
 * The rxe transport, after Linux rdma_rxe: a per-device {@link io.jhca.rxe.transport.Engine} (an Agrona agent) that
 * receives and checks packets, and for each QP a {@link io.jhca.rxe.transport.Requester} (rxe_req.c),
 * {@link io.jhca.rxe.transport.Completer} (rxe_comp.c) and {@link io.jhca.rxe.transport.Responder} (rxe_resp.c) over
 * preallocated send/receive rings and completion rings. Registered memory is touched only through
 * {@link io.jhca.rxe.transport.MemoryAccess}, which checks key, PD, access and bounds first. Nothing on the data path
 * allocates.
 */
package io.jhca.rxe.transport;
