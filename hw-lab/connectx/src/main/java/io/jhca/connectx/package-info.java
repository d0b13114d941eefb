/**
 * The ConnectX device model: a software mlx5 PCI function the mlx5 provider drives exactly as it would drive a
 * ConnectX-4+ behind vfio, through {@link io.jhca.mlx5.spi.Mlx5Function}. It is the device side of the PCI bus: the
 * driver never depends on this package (module jhca-connectx); it finds the model at run time.
 *
 * <h2>Two ways to run it</h2>
 * <ul>
 *   <li>In process: {@link io.jhca.connectx.ModelFunction}, found by ServiceLoader as
 *       {@link io.jhca.connectx.ModelFunctionSource}; devices from {@code jhca.mlx5.sim} / {@code JHCA_MLX5_SIM},
 *       default {@code mlx5_0=127.0.0.3,mlx5_1=127.0.0.4}, {@code none} for none.</li>
 *   <li>In a process of its own: {@link io.jhca.connectx.ModelProcess} serves BAR0 from a shared-memory file and
 *       reaches the driver machine's memory through its RAM file ({@link io.jhca.connectx.GuestRam}, IOVA =
 *       guest-physical address), as a device behind ivshmem would; {@link io.jhca.connectx.ShmFunction} is the
 *       driver's side of that pairing without a VM (a test and lab backend).</li>
 * </ul>
 *
 * <h2>What it is made of</h2>
 * <ul>
 *   <li>{@link io.jhca.connectx.ModelFunction}: BAR0 (64 pages of off-heap memory: the initialization segment, UAR pages
 *       from index 1), DMA memory with identity IOVAs and the model's IOMMU table ({@code Iommu}), the only memory the
 *       model ever reads or writes.</li>
 *   <li>{@link io.jhca.connectx.ConnectXModel}: firmware and hardware as one Agrona agent on one thread. Firmware
 *       ({@code InitSegmentDevice}, {@code Firmware}, {@code ObjectCommands}, {@code QpCommands}) executes the PRM
 *       commands through the device half of the command queue, {@link io.jhca.connectx.CmdQueueDevice} and
 *       {@link io.jhca.connectx.DeviceCommand}, which share the entry and mailbox formats with the driver; hardware ({@code DataPath},
 *       {@code UarDoorbells}, {@code SendWqeParser}, {@code CqeWriter}) follows doorbell records, checks doorbells,
 *       parses WQEs with the wqe package's readers and writes CQEs and EQEs.</li>
 *   <li>The wire ({@code RxeMirror}): one rxe device per function on the port's IP, driven from the same thread
 *       (progress mode CALLER). PDs, memory keys (under the very same key values, {@link io.jhca.rxe.RxeKeys}), CQs and
 *       QPs (same QPN) are mirrored on it, every send and receive WQE becomes an rxe work request (wr_id = the WQE's
 *       16-bit index), every rxe completion an mlx5 CQE. RoCEv2 is implemented once, in rxe-provider.</li>
 * </ul>
 *
 * <h2>Behaviour worth knowing</h2>
 * <ul>
 *   <li>{@code initializing} is set at power-on; firmware pre-init clears it after ~10 ms (mlx5_core waits for that
 *       before writing the queue address) and the write of cmdq_phy_addr clears it at once (PRM start-up order).</li>
 *   <li>Errors are statuses and CQEs, never a stopped model: bad commands get cmd.c's statuses with
 *       {@link io.jhca.connectx.CmdSyndromes} syndromes; malformed WQEs error CQEs with hardware's syndromes and
 *       {@link io.jhca.connectx.CqeErrors} vendor syndromes, the QP then in error and everything after it flushed.</li>
 *   <li>CQ overrun: a CQE is never written over one the driver has not consumed (its consumer index is in the CQ
 *       doorbell record); the CQ goes to error and a CQ_ERROR event goes to the EQ that asked for them.</li>
 *   <li>QP events: what the wire raises on a mirror QP (a bad rkey NAKed by the responder, say) becomes the matching
 *       EQE ({@code AsyncEventRelay}: WQ_ACCESS_ERROR, WQ_INVAL_REQ_ERROR, WQ_CATAS_ERROR, ...) on the EQ that asked
 *       for it, and an error event puts the QP in ERR.</li>
 *   <li>{@link io.jhca.connectx.ModelCounters} counts what the device saw, including driver bugs it caught (doorbells
 *       not matching their WQE, memory unmapped under live objects).</li>
 *   <li>Q counters ({@code QCounterCommands}, {@code QCounterSet}): a set counts the QPs attached to it at RST2INIT
 *       by mapping their rxe per-QP counters onto the query_q_counter_out fields that mean the same event; local and
 *       CQE error counters, DCT and congestion control counters stay 0.</li>
 * </ul>
 *
 * <h2>Limits</h2>
 * MTT memory keys only, whose pages must be contiguous host memory; no SRQ, XRC, DC, UMR, memory windows, masked
 * atomics, raw Ethernet or interrupts; page requests after INIT_HCA only when asked for
 * ({@link io.jhca.connectx.ConnectXModel#requestPages}); cap types general, atomic and RoCE only; atomics in host byte
 * order (what the rxe transport does, atomic_req_8B_endianness_mode 1); a UD or UC send error puts the
 * whole QP in error (no SQE state). Out of process, peers reach this function's memory only when the driver maps RAM
 * at the address the model does ({@code --ram-address}): the rxe transport copies at the virtual address a peer
 * names, so a guest's own virtual addresses would need a translation through the memory region first.
 */
package io.jhca.connectx;
