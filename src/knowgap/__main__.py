from knowgap.cli import main

main()
