import Foundation

extension BitcoinPSBT {
    /// What the Signer (`sign(publicKey:policy:with:)`, `sign(masterFingerprint:childPublicKey:policy:with:)`,
    /// `signatureHash(input:policy:)`) requires of an input before it signs it.
    ///
    /// By default a segwit v0 input (P2WPKH, the kind this module signs) is signed only when the PSBT carries
    /// its previous transaction (`PSBT_IN_NON_WITNESS_UTXO`): the parser checks that transaction's txid and
    /// output index against the outpoint, and `spentOutput(input:)` that `PSBT_IN_WITNESS_UTXO`, when present,
    /// is exactly its output, so the amount the BIP-143 signature commits to is the real one. Without it the
    /// signer refuses with `ChainError.missingNonWitnessUTXO(input:)`.
    public struct SigningPolicy: Sendable, Equatable {
        /// Also sign a segwit v0 input that has only `PSBT_IN_WITNESS_UTXO`.
        ///
        /// **Risk (BIP-143's fee attack, CVE-2020-14199):** the amount then comes from the PSBT alone. A BIP-143
        /// signature commits to its own input's amount only, so whoever made the PSBT can send two PSBTs of one
        /// transaction, each lying about a different input so that each shows a small fee, keep one valid
        /// signature from each, and broadcast a transaction whose true fee is the difference (all the inputs'
        /// value not paid to outputs). Set this only when every input's amount was checked elsewhere (the
        /// wallet's own UTXO set, a node it trusts), or when the transaction has at most one input this wallet
        /// signs. (`BitcoinTransaction.segwitSignatureHash(…amount:)` likewise trusts the amount its caller gives.)
        public var allowWitnessUTXOOnly: Bool

        /// A policy; by default (`allowWitnessUTXOOnly` false) every signed input needs its previous transaction.
        public init(allowWitnessUTXOOnly: Bool = false) {
            self.allowWitnessUTXOOnly = allowWitnessUTXOOnly
        }

        /// The default: a segwit v0 input is signed only with its previous transaction (`PSBT_IN_NON_WITNESS_UTXO`).
        public static let requireNonWitnessUTXO = SigningPolicy()

        /// The opt-out: inputs with only `PSBT_IN_WITNESS_UTXO` are signed too (see `allowWitnessUTXOOnly` for
        /// what this risks).
        public static let allowingWitnessUTXOOnly = SigningPolicy(allowWitnessUTXOOnly: true)
    }
}
