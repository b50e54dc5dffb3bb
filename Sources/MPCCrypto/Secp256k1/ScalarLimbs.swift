/// Constant-time 256-bit limb arithmetic modulo the secp256k1 group order n.
///
/// Values are 4 little-endian 64-bit limbs. Conditional steps use masks, never branches, so the
/// running time does not depend on the values.
enum Limbs {
    typealias Value = (UInt64, UInt64, UInt64, UInt64)

    /// n = FFFFFFFF FFFFFFFF FFFFFFFF FFFFFFFE BAAEDCE6 AF48A03B BFD25E8C D0364141.
    static let n: Value = (0xBFD2_5E8C_D036_4141, 0xBAAE_DCE6_AF48_A03B, 0xFFFF_FFFF_FFFF_FFFE, 0xFFFF_FFFF_FFFF_FFFF)
    /// R mod n, R = 2^256.
    static let rModN: Value = (0x402D_A173_2FC9_BEBF, 0x4551_2319_50B7_5FC4, 0x1, 0x0)
    /// R² mod n.
    static let r2ModN: Value = (0x896C_F214_67D7_D140, 0x7414_96C2_0E7C_F878, 0xE697_F5E4_5BCD_07C6, 0x9D67_1CD5_81C6_9BC5)
    /// R³ mod n.
    static let r3ModN: Value = (0x7BC0_CFE0_E9FF_41ED, 0x0017_6484_44D4_322C, 0xB1B3_1347_F1D0_B2DA, 0x555D_800C_18EF_116D)
    /// −n⁻¹ mod 2^64.
    static let nPrime: UInt64 = 0x4B0D_FF66_5588_B13F

    /// The exponent n − 2 as 64 big-endian nibbles (for Fermat inversion).
    static let nMinus2Nibbles: [UInt8] = {
        let (value, _) = subtract(n, (2, 0, 0, 0))
        return bigEndianBytes(value).flatMap { [$0 >> 4, $0 & 0x0F] }
    }()

    static func fromBigEndian<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> Value {
        if let value = bytes.withContiguousStorageIfAvailable({ fromBigEndian(buffer: UnsafeRawBufferPointer($0)) }) {
            return value
        }
        return Array(bytes).withUnsafeBytes { fromBigEndian(buffer: $0) }
    }

    /// Reads 32 big-endian bytes (the caller checked the length).
    static func fromBigEndian(buffer: UnsafeRawBufferPointer) -> Value {
        func limb(_ offset: Int) -> UInt64 {
            UInt64(bigEndian: buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        }
        return (limb(24), limb(16), limb(8), limb(0))
    }

    static func bigEndianBytes(_ value: Value) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { buffer, initialized in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            raw.storeBytes(of: value.3.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: value.2.bigEndian, toByteOffset: 8, as: UInt64.self)
            raw.storeBytes(of: value.1.bigEndian, toByteOffset: 16, as: UInt64.self)
            raw.storeBytes(of: value.0.bigEndian, toByteOffset: 24, as: UInt64.self)
            initialized = 32
        }
    }

    // Carries and borrows come from 128-bit wrapping arithmetic (add/adc, sub/sbb in the release build),
    // never through `Bool`: with `overflow ? 1 : 0` the compiler emitted conditional jumps on secret
    // carries (seen in the disassembly of a release build). `scripts/check-constant-time` (run by
    // `scripts/test`) fails if a conditional branch comes back into the scalar arithmetic.

    /// a + b + carry → (sum, carry out), carry ∈ {0, 1}. Through a 128-bit sum: the compiler emits
    /// add/adc and takes the carry from the high word, no flag-to-Bool conversion.
    @inline(__always)
    static func addCarry(_ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
        let sum = UInt128(a) &+ UInt128(b) &+ UInt128(carry)
        return (UInt64(truncatingIfNeeded: sum), UInt64(truncatingIfNeeded: sum &>> 64))
    }

    /// a − b − borrow → (difference, borrow out), borrow ∈ {0, 1}: a negative 128-bit difference wraps
    /// to a value whose top bit is set.
    @inline(__always)
    static func subBorrow(_ a: UInt64, _ b: UInt64, _ borrow: UInt64) -> (UInt64, UInt64) {
        let difference = UInt128(a) &- UInt128(b) &- UInt128(borrow)
        return (UInt64(truncatingIfNeeded: difference), UInt64(truncatingIfNeeded: difference &>> 127))
    }

    /// acc + a·b + carry → (low, high); cannot overflow 128 bits ((2^64 − 1)² + 2·(2^64 − 1) = 2^128 − 1).
    @inline(__always)
    static func multiplyAdd(_ acc: UInt64, _ a: UInt64, _ b: UInt64, _ carry: UInt64) -> (UInt64, UInt64) {
        let value = UInt128(a) &* UInt128(b) &+ UInt128(acc) &+ UInt128(carry)
        return (UInt64(truncatingIfNeeded: value), UInt64(truncatingIfNeeded: value &>> 64))
    }

    @inline(__always)
    static func subtract(_ a: Value, _ b: Value) -> (Value, UInt64) {
        let (d0, b0) = subBorrow(a.0, b.0, 0)
        let (d1, b1) = subBorrow(a.1, b.1, b0)
        let (d2, b2) = subBorrow(a.2, b.2, b1)
        let (d3, b3) = subBorrow(a.3, b.3, b2)
        return ((d0, d1, d2, d3), b3)
    }

    @inline(__always)
    static func select(_ ifOne: Value, _ ifZero: Value, mask: UInt64) -> Value {
        ((ifOne.0 & mask) | (ifZero.0 & ~mask),
         (ifOne.1 & mask) | (ifZero.1 & ~mask),
         (ifOne.2 & mask) | (ifZero.2 & ~mask),
         (ifOne.3 & mask) | (ifZero.3 & ~mask))
    }

    /// Given value = high·2^256 + low < 2n, returns value mod n.
    @inline(__always)
    static func conditionalSubtractN(_ low: Value, high: UInt64) -> Value {
        let (difference, borrow) = subtract(low, n)
        // Keep the difference when the value is ≥ n: a carry above 2^256, or no borrow.
        let keepDifference = high | (borrow ^ 1)
        return select(difference, low, mask: 0 &- keepDifference)
    }

    /// value mod n for any value < 2^256 (< 2n since n > 2^255).
    static func reduceOnce(_ value: Value) -> Value {
        conditionalSubtractN(value, high: 0)
    }

    static func addModN(_ a: Value, _ b: Value) -> Value {
        let (s0, c0) = addCarry(a.0, b.0, 0)
        let (s1, c1) = addCarry(a.1, b.1, c0)
        let (s2, c2) = addCarry(a.2, b.2, c1)
        let (s3, c3) = addCarry(a.3, b.3, c2)
        return conditionalSubtractN((s0, s1, s2, s3), high: c3)
    }

    static func subtractModN(_ a: Value, _ b: Value) -> Value {
        let (d, borrow) = subtract(a, b)
        let mask = 0 &- borrow
        let (r0, c0) = addCarry(d.0, n.0 & mask, 0)
        let (r1, c1) = addCarry(d.1, n.1 & mask, c0)
        let (r2, c2) = addCarry(d.2, n.2 & mask, c1)
        let (r3, _) = addCarry(d.3, n.3 & mask, c2)
        return (r0, r1, r2, r3)
    }

    /// Montgomery reduction (REDC) of the 512-bit value high·2^256 + low, for high < n: returns
    /// (high·2^256 + low)·R⁻¹ mod n. Half the work of a Montgomery product.
    static func montgomeryReduce(low: Value, high: Value) -> Value {
        var t0 = low.0, t1 = low.1, t2 = low.2, t3 = low.3
        var t4 = high.0, t5 = high.1, t6 = high.2, t7 = high.3
        var top: UInt64 = 0   // carry above t7
        @inline(__always) func round() {
            // t += m·n with m chosen so the lowest limb becomes zero, then shift down one limb.
            let m = t0 &* nPrime
            var c: UInt64
            (_, c) = multiplyAdd(t0, m, n.0, 0)
            (t0, c) = multiplyAdd(t1, m, n.1, c)
            (t1, c) = multiplyAdd(t2, m, n.2, c)
            (t2, c) = multiplyAdd(t3, m, n.3, c)
            var carry: UInt64
            (t3, carry) = addCarry(t4, c, 0)
            (t4, carry) = addCarry(t5, 0, carry)
            (t5, carry) = addCarry(t6, 0, carry)
            (t6, carry) = addCarry(t7, 0, carry)
            (t7, top) = addCarry(top, 0, carry)
        }
        round()
        round()
        round()
        round()
        // After four rounds the value is t0…t3 plus `t4` (0 or 1) above them, and < 2n.
        return conditionalSubtractN((t0, t1, t2, t3), high: t4)
    }

    /// Montgomery product a·b·R⁻¹ mod n (CIOS), for a, b < 2^256 with a·b < n·R.
    static func montgomeryMultiply(_ a: Value, _ b: Value) -> Value {
        var t0: UInt64 = 0, t1: UInt64 = 0, t2: UInt64 = 0, t3: UInt64 = 0, t4: UInt64 = 0
        @inline(__always) func step(_ bi: UInt64) {
            // t += a·b_i
            var carry: UInt64
            (t0, carry) = multiplyAdd(t0, a.0, bi, 0)
            (t1, carry) = multiplyAdd(t1, a.1, bi, carry)
            (t2, carry) = multiplyAdd(t2, a.2, bi, carry)
            (t3, carry) = multiplyAdd(t3, a.3, bi, carry)
            let (u4, t5) = addCarry(t4, carry, 0)
            // t = (t + m·n) / 2^64
            let m = t0 &* nPrime
            var c: UInt64
            (_, c) = multiplyAdd(t0, m, n.0, 0)
            (t0, c) = multiplyAdd(t1, m, n.1, c)
            (t1, c) = multiplyAdd(t2, m, n.2, c)
            (t2, c) = multiplyAdd(t3, m, n.3, c)
            let (s3, c4) = addCarry(u4, c, 0)
            t3 = s3
            t4 = t5 &+ c4
        }
        step(b.0)
        step(b.1)
        step(b.2)
        step(b.3)
        return conditionalSubtractN((t0, t1, t2, t3), high: t4)
    }
}
