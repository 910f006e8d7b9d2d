fn main() -> std::process::ExitCode {
    #[cfg(feature = "serve")]
    {
        queen_sqs_host::cli::main()
    }
    #[cfg(not(feature = "serve"))]
    {
        eprintln!("queen-sqs-host was built without the `serve` feature");
        std::process::ExitCode::FAILURE
    }
}
