from foilbench.cli.main import main

main()
